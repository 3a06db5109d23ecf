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
from datetime import date

from vpx.contacts.normalise import display_name, fast_phone_e164, person_display_name, postal_code
from vpx.db import Database
from vpx.geography import STATE_CODES
from vpx.registries.nucc import load_taxonomy
from vpx.registries.reader import CsvTable, ImportFailed, OpenedFile, SkipRow
from vpx.registries.records import Person, SourceRecord
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
        table = CsvTable(opened)
        columns = _Columns(table)
        # The columns read all come before the 200 "Other Provider Identifier" ones: split no further.
        table.only_up_to(columns.last_position() + 1)
        record = record_maker(columns, ctx.lookups["taxonomy"])
        for row in table.rows():
            if isinstance(row, SkipRow):
                yield row
                continue
            values = row.values
            values.append("")  # what a column missing from this layout reads as
            try:
                yield record(values)
            except SkipRow as skip:
                yield SkipRow(skip.reason, f"line {row.line}: {skip.detail}")


def record_maker(c: _Columns, taxonomy: dict[str, tuple[str, str, str, str]]) -> Callable[[list[str]], SourceRecord]:
    """The function that makes a record of a row's values. Column positions are bound once, as
    locals of a closure: this runs nine million times for the full file (docs/benchmarks.md)."""
    npi_at, entity_at, org_at, deactivated_at, reactivated_at = (
        c.npi,
        c.entity,
        c.org_name,
        c.deactivated,
        c.reactivated,
    )
    first_at, middle_at, last_at, suffix_at, credential_at = c.first, c.middle, c.last, c.suffix, c.credential
    street1_at, street2_at, city_at, state_at, postal_at = c.street1, c.street2, c.city, c.state, c.postal
    country_at, phone_at = c.country, c.phone
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

    def record(values: list[str]) -> SourceRecord:
        npi = values[npi_at].strip()
        if len(npi) != 10 or not (npi.isascii() and npi.isdigit()):
            raise SkipRow("invalid_npi", f"{npi!r} is not an NPI")
        entity = values[entity_at].strip()
        if (not entity or values[deactivated_at]) and is_deactivated(
            entity, values[deactivated_at].strip(), values[reactivated_at].strip()
        ):
            return SourceRecord(
                record_id=npi, kind="organization" if entity == "2" else "person", contact=None, active=False
            )
        if entity == "2":
            kind, name = "organization", display_name(values[org_at])
        elif entity == "1":
            kind = "person"
            name = person_display_name(
                values[first_at],
                values[middle_at].strip(),
                values[last_at],
                suffix=values[suffix_at].strip(),
                credential=values[credential_at].strip(),
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
        if licence:
            licence_state = licence_state.upper()
            license_type = ("Physician" if grouping == PHYSICIANS else classification) or None
        return SourceRecord(
            record_id=npi,
            kind=kind,
            contact={
                "business_name": name,
                "street": display_name(values[street1_at] + " " + values[street2_at]) or None,
                "city": display_name(city),
                "state": state,
                "postal_code": postal_code(values[postal_at]),
                "phone": fast_phone_e164(values[phone_at].strip()),
                "industry": vertical,
                "specialty": specialty,
                "license_type": license_type if licence else None,
                "license_number": licence or None,
                "license_state": licence_state if licence and licence_state in states else None,
            },
            people=people,
        )

    return record
