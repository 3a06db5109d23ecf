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

from collections.abc import Iterator
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
        taxonomy: dict[str, tuple[str, str, str, str]] = ctx.lookups["taxonomy"]
        for row in table.rows():
            if isinstance(row, SkipRow):
                yield row
                continue
            row.values.append("")  # what a column missing from this layout reads as
            try:
                yield self.record(row.values, columns, taxonomy)
            except SkipRow as skip:
                yield SkipRow(skip.reason, f"line {row.line}: {skip.detail}")

    def record(self, values: list[str], c: _Columns, taxonomy: dict[str, tuple[str, str, str, str]]) -> SourceRecord:
        npi = values[c.npi].strip()
        if len(npi) != 10 or not (npi.isascii() and npi.isdigit()):
            raise SkipRow("invalid_npi", f"{npi!r} is not an NPI")
        entity = values[c.entity].strip()
        if is_deactivated(entity, values[c.deactivated].strip(), values[c.reactivated].strip()):
            return SourceRecord(
                record_id=npi, kind="organization" if entity == "2" else "person", contact=None, active=False
            )
        if entity == "2":
            kind, name = "organization", display_name(values[c.org_name])
        elif entity == "1":
            kind = "person"
            name = person_display_name(
                values[c.first],
                values[c.middle].strip(),
                values[c.last],
                suffix=values[c.suffix].strip(),
                credential=values[c.credential].strip(),
            )
        else:
            raise SkipRow("invalid_entity_type", f"NPI {npi}: entity type {entity!r}")
        if not name:
            raise SkipRow("missing_name", f"NPI {npi}")
        country = values[c.country].strip().upper()
        if country not in ("", "US"):
            raise SkipRow("foreign_address", f"NPI {npi}: practice location in {country}")
        state = values[c.state].strip().upper()
        if state not in STATE_CODES:
            raise SkipRow("invalid_state", f"NPI {npi}: state {state!r}")
        city = values[c.city].strip()
        if not city:
            raise SkipRow("missing_city", f"NPI {npi}")
        code, licence, licence_state = primary_group(values, c.groups)
        specialty, vertical, grouping, classification = taxonomy.get(code, (None, "healthcare", "", ""))
        licence_state = licence_state.upper()
        street = values[c.street1] + " " + values[c.street2]
        people: list[Person] = []
        ao_last = values[c.ao_last].strip()
        if kind == "organization" and ao_last:
            people.append(
                Person(
                    name=person_display_name(values[c.ao_first].strip(), values[c.ao_middle].strip(), ao_last),
                    role="authorized_official",
                    title=display_name(values[c.ao_title].strip()) or None,
                    phone=fast_phone_e164(values[c.ao_phone].strip()),
                )
            )
        return SourceRecord(
            record_id=npi,
            kind=kind,
            contact={
                "business_name": name,
                "street": display_name(street) or None,
                "city": display_name(city),
                "state": state,
                "postal_code": postal_code(values[c.postal]),
                "phone": fast_phone_e164(values[c.phone].strip()),
                "industry": vertical,
                "specialty": specialty,
                "license_type": (("Physician" if grouping == PHYSICIANS else classification) or None)
                if licence
                else None,
                "license_number": licence or None,
                "license_state": licence_state if licence and licence_state in STATE_CODES else None,
            },
            people=people,
        )
