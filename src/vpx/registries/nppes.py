"""CMS NPPES, the NPI registry's data-dissemination file (`vpx import nppes npidata_pfile_*.csv`).

Columns are found by header name, so the 2015 and 2018 layouts (``Provider Gender Code``), the
current one (``Provider Sex Code``, ``Certification Date``) and the V2 variant all load. Each NPI is
a record: organisations (entity type 2) and individual providers (1) at their practice location;
the primary taxonomy is the group whose switch is ``Y`` (not necessarily the first); its NUCC code
gives the specialty and the vertical, its licence the licence number and state. An organisation's
authorized official is kept as a decision-maker. A deactivated NPI (empty entity type, or a
deactivation date without a later reactivation) takes its contact out of search.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date, datetime
from hashlib import blake2b
from typing import cast

from vpx.contacts.identifiers import aka_token, ein_token, licence_token
from vpx.contacts.normalise import (
    display_name,
    display_street,
    fast_phone_e164,
    name_key,
    person_display_name,
    person_name_and_key,
    postal_code,
)
from vpx.db import Database
from vpx.geography import STATE_CODES
from vpx.registries.nucc import load_taxonomy
from vpx.registries.reader import CsvTable, ImportFailed, OpenedFile, SkipRow
from vpx.registries.records import Person, Ready, SourceRecord, cached_text_key, match_keys
from vpx.registries.sources import ContactSource, ImportContext, register

GROUPS = 15
MISSING = -1  # the position of a column the file lacks: each row gets an empty string appended
PHYSICIANS = "Allopathic & Osteopathic Physicians"


def _date(text: str) -> date | None:
    """``MM/DD/YYYY``, or None."""
    text = text.strip()
    if len(text) != 10:
        return None
    try:
        return date(int(text[6:]), int(text[:2]), int(text[3:5]))
    except ValueError:
        return None


def is_deactivated(entity_type: str, deactivated_on: str, reactivated_on: str) -> bool:
    if not entity_type.strip():
        return True
    deactivated = _date(deactivated_on)
    if deactivated is None:
        return False
    reactivated = _date(reactivated_on)
    return reactivated is None or reactivated < deactivated


class _Columns:
    """Positions of the columns the importer reads, by header name."""

    def __init__(self, table: CsvTable) -> None:
        need = table.require

        def may(name: str) -> int:
            # A column an older or newer layout lacks reads as the empty string appended to each row.
            found = table.position(name)
            return MISSING if found is None else found

        self.npi = need("NPI")
        self.entity = need("Entity Type Code")
        self.org_name = need("Provider Organization Name (Legal Business Name)")
        self.other_name = may("Provider Other Organization Name")
        # CMS publishes "<UNAVAIL>" here; an EIN is read when a file has one (ein_token refuses the rest).
        self.ein = may("Employer Identification Number (EIN)")
        self.last = need("Provider Last Name (Legal Name)")
        self.first = need("Provider First Name")
        self.middle = may("Provider Middle Name")
        self.suffix = may("Provider Name Suffix Text")
        self.credential = may("Provider Credential Text")
        self.street1 = need("Provider First Line Business Practice Location Address")
        self.street2 = may("Provider Second Line Business Practice Location Address")
        self.city = need("Provider Business Practice Location Address City Name")
        self.state = need("Provider Business Practice Location Address State Name")
        self.postal = need("Provider Business Practice Location Address Postal Code")
        self.country = may("Provider Business Practice Location Address Country Code (If outside U.S.)")
        self.phone = may("Provider Business Practice Location Address Telephone Number")
        self.mailing_phone = may("Provider Business Mailing Address Telephone Number")
        self.deactivated = may("NPI Deactivation Date")
        self.reactivated = may("NPI Reactivation Date")
        self.ao_last = may("Authorized Official Last Name")
        self.ao_first = may("Authorized Official First Name")
        self.ao_middle = may("Authorized Official Middle Name")
        self.ao_title = may("Authorized Official Title or Position")
        self.ao_phone = may("Authorized Official Telephone Number")
        self.groups: list[tuple[int, int, int, int]] = []
        for n in range(1, GROUPS + 1):
            code = may(f"Healthcare Provider Taxonomy Code_{n}")
            if code == MISSING:
                continue
            self.groups.append(
                (
                    code,
                    may(f"Provider License Number_{n}"),
                    may(f"Provider License Number State Code_{n}"),
                    may(f"Healthcare Provider Primary Taxonomy Switch_{n}"),
                )
            )
        self.positions = [p for p in vars(self).values() if isinstance(p, int)]
        self.positions += [p for group in self.groups for p in group]
        if not self.groups:
            raise ImportFailed(
                "no 'Healthcare Provider Taxonomy Code_n' columns: not an NPPES file", code="unexpected_layout"
            )

    def last_position(self) -> int:
        return max(self.positions)


def primary_group(values: list[str], groups: list[tuple[int, int, int, int]]) -> tuple[str, str, str]:
    """(taxonomy code, licence number, licence state) of the group whose switch is Y; the first
    group with a code when none is."""
    first: tuple[str, str, str] | None = None
    for code_at, licence_at, state_at, switch_at in groups:
        code = values[code_at].strip()
        if not code:
            continue
        group = (code, values[licence_at].strip(), values[state_at].strip())
        if values[switch_at].strip().upper() == "Y":
            return group
        if first is None:
            first = group
    return first or ("", "", "")


@register
class Nppes(ContactSource):
    name = "nppes"
    registry = "nppes"
    title = "CMS NPPES NPI registry (data dissemination CSV)"

    async def before_import(self, database: Database, ctx: ImportContext) -> None:
        async with database.read_sessions() as session:
            taxonomy = await load_taxonomy(session)
        if not taxonomy:
            raise ImportFailed(
                "NPPES needs the NUCC taxonomy code set for specialties and verticals: run "
                "`vpx import nucc nucc_taxonomy_<version>.csv` first.",
                code="taxonomy_missing",
            )
        ctx.lookups["taxonomy"] = taxonomy

    def read(self, opened: OpenedFile, ctx: ImportContext) -> Iterator[SourceRecord | SkipRow]:
        table, columns = _open_table(opened)
        record = record_maker(columns, ctx.lookups["taxonomy"])
        return table.records(record)

    def read_ready(self, opened: OpenedFile, ctx: ImportContext) -> Iterator[Ready | SkipRow]:
        # The same rows made straight into what the writer takes: no SourceRecord, no contact dict
        # (a test holds the two paths equal, record by record).
        table, columns = _open_table(opened)
        return table.records(ready_maker(columns, ctx.lookups["taxonomy"], ctx.now))


def _open_table(opened: OpenedFile) -> tuple[CsvTable, _Columns]:
    table = CsvTable(opened)
    columns = _Columns(table)
    # The columns read all come before the 200 "Other Provider Identifier" ones: split no further.
    # A column missing from this layout reads as the empty string padded onto each row (MISSING).
    table.only_up_to(columns.last_position() + 1, pad=True)
    return table, columns


Taxonomy = dict[str, tuple[str, str, str, str]]


def record_maker(c: _Columns, taxonomy: Taxonomy) -> Callable[[list[str]], SourceRecord]:
    """The function that makes a record of a row's values."""
    return cast(Callable[[list[str]], SourceRecord], _maker(c, taxonomy, None))


def ready_maker(c: _Columns, taxonomy: Taxonomy, now: datetime) -> Callable[[list[str]], Ready]:
    """The function that makes of a row's values the record as the writer takes it:
    ``record_maker(c, taxonomy)(values).ready(now)``, computed directly."""
    return cast(Callable[[list[str]], Ready], _maker(c, taxonomy, now))


def _maker(c: _Columns, taxonomy: Taxonomy, now: datetime | None) -> Callable[[list[str]], SourceRecord | Ready]:
    # One function for both makers, so that they cannot drift apart. Column positions are bound
    # once, as locals of a closure: this runs nine million times for the full file
    # (docs/benchmarks.md). With ``now``, the contacts row, the matching keys and the digest are made
    # here from the values at hand, the digest's fields in SourceRecord.row_hash's (sorted) order.
    npi_at, entity_at, org_at, deactivated_at, reactivated_at = (
        c.npi,
        c.entity,
        c.org_name,
        c.deactivated,
        c.reactivated,
    )
    other_name_at, ein_at = c.other_name, c.ein
    first_at, middle_at, last_at, suffix_at, credential_at = c.first, c.middle, c.last, c.suffix, c.credential
    street1_at, street2_at, city_at, state_at, postal_at = c.street1, c.street2, c.city, c.state, c.postal
    country_at, phone_at, mailing_phone_at = c.country, c.phone, c.mailing_phone
    ao_last_at, ao_first_at, ao_middle_at, ao_title_at, ao_phone_at = (
        c.ao_last,
        c.ao_first,
        c.ao_middle,
        c.ao_title,
        c.ao_phone,
    )
    groups = c.groups
    states = STATE_CODES
    unknown = (None, "healthcare", "", "")
    ready = now is not None
    # A deactivated record's digest depends on its kind alone.
    gone_digest = {kind: SourceRecord("", kind, None, active=False).row_hash() for kind in ("organization", "person")}

    def record(values: list[str]) -> SourceRecord | Ready:
        npi = values[npi_at].strip()
        if len(npi) != 10 or not (npi.isascii() and npi.isdigit()):
            raise SkipRow("invalid_npi", f"{npi!r} is not an NPI")
        entity = values[entity_at].strip()
        if (not entity or values[deactivated_at]) and is_deactivated(
            entity, values[deactivated_at].strip(), values[reactivated_at].strip()
        ):
            kind = "organization" if entity == "2" else "person"
            if ready:
                return Ready(npi, kind, False, None, gone_digest[kind], None, None, ())
            return SourceRecord(record_id=npi, kind=kind, contact=None, active=False)
        key: str | None = None
        if entity == "2":
            kind, name = "organization", display_name(values[org_at])
        elif entity == "1":
            kind = "person"
            name, key = person_name_and_key(
                values[first_at],
                values[middle_at].strip(),
                values[last_at],
                values[suffix_at].strip(),
                values[credential_at].strip(),
            )
        else:
            raise SkipRow("invalid_entity_type", f"NPI {npi}: entity type {entity!r}")
        if not name:
            raise SkipRow("missing_name", f"NPI {npi}")
        country = values[country_at]
        if country and (country := country.strip().upper()) not in ("", "US"):
            raise SkipRow("foreign_address", f"NPI {npi}: practice location in {country}")
        state = values[state_at].strip().upper()
        if state not in states:
            raise SkipRow("invalid_state", f"NPI {npi}: state {state!r}")
        city = values[city_at].strip()
        if not city:
            raise SkipRow("missing_city", f"NPI {npi}")
        code, licence, licence_state = primary_group(values, groups)
        specialty, vertical, grouping, classification = taxonomy.get(code, unknown)
        people: list[Person] = []
        if kind == "organization" and (ao_last := values[ao_last_at].strip()):
            people.append(
                Person(
                    name=person_display_name(values[ao_first_at].strip(), values[ao_middle_at].strip(), ao_last),
                    role="authorized_official",
                    title=display_name(values[ao_title_at].strip()) or None,
                    phone=fast_phone_e164(values[ao_phone_at].strip()),
                )
            )
        license_type: str | None = None
        licence_number: str | None = None
        if licence:
            licence_number = licence
            licence_state = licence_state.upper()
            license_type = ("Physician" if grouping == PHYSICIANS else classification) or None
        licence_from = licence_state if licence and licence_state in states else None
        street = display_street(values[street1_at], values[street2_at]) or None
        city = display_name(city)
        postal = postal_code(values[postal_at])
        practice_phone = values[phone_at].strip()
        phone = fast_phone_e164(practice_phone)
        # Strong identifiers (vpx.contacts.identifiers): the NPI, the licence, the mailing address's
        # phone when it is another number (a record listing both agrees with either), and an
        # organisation's EIN and other name (a DBA, a former name) to compare names with. One token of
        # each kind at most: sorted, they are what identifiers.joined would make.
        tokens = [f"npi:{npi}"]
        if licence_number is not None:
            token = licence_token(licence_from, license_type, licence_number)
            if token is not None:
                tokens.append(token)
        mailing = values[mailing_phone_at].strip()
        if mailing and mailing != practice_phone:
            mailing_phone = fast_phone_e164(mailing)
            if mailing_phone and mailing_phone != phone:
                tokens.append(f"tel:{mailing_phone}")
        if kind == "organization":
            ein = ein_token(values[ein_at])
            other_name = values[other_name_at].strip()
            aka = aka_token(other_name) if other_name and other_name != values[org_at].strip() else None
            tokens += [t for t in (ein, aka) if t]
        identifiers = " ".join(sorted(tokens))
        if not ready:
            return SourceRecord(
                record_id=npi,
                kind=kind,
                contact={
                    "business_name": name,
                    "street": street,
                    "city": city,
                    "state": state,
                    "postal_code": postal,
                    "phone": phone,
                    "industry": vertical,
                    "specialty": specialty,
                    "license_type": license_type,
                    "license_number": licence_number,
                    "license_state": licence_from,
                    "identifiers": identifiers,
                },
                people=people,
            )
        # display_name and person_display_name collapse whitespace already: the names are as
        # contact_values would make them.
        digest = [kind, "1", "", "business_name=" + name, "city=" + city, "industry=" + vertical]
        if licence_number is not None:
            digest.append("license_number=" + licence_number)
        if licence_from is not None:
            digest.append("license_state=" + licence_from)
        if license_type is not None:
            digest.append("license_type=" + license_type)
        if phone is not None:
            digest.append("phone=" + phone)
        if postal is not None:
            digest.append("postal_code=" + postal)
        if specialty is not None:
            digest.append("specialty=" + specialty)
        digest.append("state=" + state)
        if street is not None:
            digest.append("street=" + street)
        if people:
            digest += [f"{p.role}|{p.name}|{p.title}|{p.phone}" for p in people]
        if key is None:
            key = name_key(name)
        row = (
            name, key, street, city, cached_text_key(city) or "", state, postal, "US", phone, None, None, None,
            vertical, specialty, cached_text_key(specialty), license_type, cached_text_key(license_type),
            licence_number, licence_from, identifiers, "active", "registry", None, None, now, now,
        )  # fmt: skip
        return Ready(
            npi,
            kind,
            True,
            None,
            blake2b("\x1f".join(digest).encode(), digest_size=8).hexdigest(),
            row,
            match_keys(row) if kind == "organization" else None,
            tuple([(p.name, p.title, p.role, p.phone) for p in people]),
        )

    return record
