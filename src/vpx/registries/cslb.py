"""California's Contractors State License Board master file (`vpx import cslb MasterLicenseData.csv`).

CSLB's "License Master" export, with or without its header line (without one, the 52 columns of the
2020 layout are assumed; with one, columns are found by name, so the newer export with more columns
loads too). Each licence is a record: the business at its mailing address, its classifications as
licence types (``C-10 Electrical Contractor``) and verticals (home-services, construction, solar, …),
the licence number and CSLB status, and the personnel the file names: a sole owner or partner whose
name the business carries (``CLARK GORDON CONSTRUCTION`` with full name ``GORDON CLARK CONSTRUCTION``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from vpx.contacts.identifiers import licence_token
from vpx.contacts.normalise import display_name, fast_phone_e164, postal_code
from vpx.geography import STATE_CODES
from vpx.registries.reader import CsvTable, OpenedFile, SkipRow
from vpx.registries.records import Person, SourceRecord
from vpx.registries.sources import ContactSource, ImportContext, register

# The 2020 column order (the sample in shared/data has no header line).
HEADER_2020 = [
    "LicenseNo",
    "LastUpdate",
    "BusinessName",
    "BUS-NAME-2",
    "FullBusinessName",
    "MailingAddress",
    "City",
    "State",
    "County",
    "ZIPCode",
    "country",
    "BusinessPhone",
    "BusinessType",
    "IssueDate",
    "ReissueDate",
    "ExpirationDate",
    "InactivationDate",
    "ReactivationDate",
    "PendingSuspension",
    "PendingClassRemoval",
    "PendingClassReplace",
    "PrimaryStatus",
    "SecondaryStatus",
    "Classifications(s)",
    "AsbestosReg",
    "WorkersCompCoverageType",
    "WCInsuranceCompany",
    "WCPolicyNumber",
    "WCEffectiveDate",
    "WCExpirationDate",
    "WCCancellationDate",
    "WCSuspendDate",
    "CBSuretyCompany",
    "CBNumber",
    "CBEffectiveDate",
    "CBCancellationDate",
    "CBAmount",
    "WBSuretyCompany",
    "WBNumber",
    "WBEffectiveDate",
    "WBCancellationDate",
    "WBAmount",
    "DBSuretyCompany",
    "DBNumber",
    "DBEffectiveDate",
    "DBCancellationDate",
    "DBAmount",
    "DateRequired",
    "DiscpCaseRegion",
    "DBBondReason",
    "DBCaseNo",
    "NAME-TP-2",
]

# Classification: (name, vertical). A, B and C classes are "… Contractor"; D classes are C-61
# limited specialties.
CLASSIFICATIONS: dict[str, tuple[str, str]] = {
    "A": ("General Engineering", "construction"),
    "B": ("General Building", "construction"),
    "B-2": ("Residential Remodeling", "home-services"),
    "C-2": ("Insulation and Acoustical", "home-services"),
    "C-4": ("Boiler, Hot Water Heating and Steam Fitting", "home-services"),
    "C-5": ("Framing and Rough Carpentry", "construction"),
    "C-6": ("Cabinet, Millwork and Finish Carpentry", "home-services"),
    "C-7": ("Low Voltage Systems", "home-services"),
    "C-8": ("Concrete", "construction"),
    "C-9": ("Drywall", "construction"),
    "C-10": ("Electrical", "home-services"),
    "C-11": ("Elevator", "construction"),
    "C-12": ("Earthwork and Paving", "construction"),
    "C-13": ("Fencing", "home-services"),
    "C-15": ("Flooring and Floor Covering", "home-services"),
    "C-16": ("Fire Protection", "construction"),
    "C-17": ("Glazing", "construction"),
    "C-20": ("Warm-Air Heating, Ventilating and Air-Conditioning", "home-services"),
    "C-21": ("Building Moving/Demolition", "construction"),
    "C-22": ("Asbestos Abatement", "environmental-services"),
    "C-23": ("Ornamental Metal", "construction"),
    "C-27": ("Landscaping", "home-services"),
    "C-28": ("Lock and Security Equipment", "security-services"),
    "C-29": ("Masonry", "construction"),
    "C-31": ("Construction Zone Traffic Control", "construction"),
    "C-32": ("Parking and Highway Improvement", "construction"),
    "C-33": ("Painting and Decorating", "home-services"),
    "C-34": ("Pipeline", "construction"),
    "C-35": ("Lathing and Plastering", "construction"),
    "C-36": ("Plumbing", "home-services"),
    "C-38": ("Refrigeration", "home-services"),
    "C-39": ("Roofing", "home-services"),
    "C-42": ("Sanitation System", "home-services"),
    "C-43": ("Sheet Metal", "construction"),
    "C-45": ("Sign", "construction"),
    "C-46": ("Solar", "solar"),
    "C-47": ("General Manufactured Housing", "construction"),
    "C-49": ("Tree and Palm", "home-services"),
    "C-50": ("Reinforcing Steel", "construction"),
    "C-51": ("Structural Steel", "construction"),
    "C-53": ("Swimming Pool", "home-services"),
    "C-54": ("Ceramic and Mosaic Tile", "home-services"),
    "C-55": ("Water Conditioning", "home-services"),
    "C-57": ("Well Drilling", "construction"),
    "C-60": ("Welding", "construction"),
    "C-61": ("Limited Specialty", "construction"),
    "D-3": ("Awnings", "home-services"),
    "D-4": ("Central Vacuum Systems", "home-services"),
    "D-6": ("Concrete Related Services", "construction"),
    "D-9": ("Drilling, Blasting and Oil Field Work", "construction"),
    "D-12": ("Synthetic Products", "construction"),
    "D-16": ("Hardware, Locks and Safes", "security-services"),
    "D-21": ("Machinery and Pumps", "construction"),
    "D-24": ("Metal Products", "construction"),
    "D-28": ("Doors, Gates and Activating Devices", "home-services"),
    "D-29": ("Paperhanging", "home-services"),
    "D-31": ("Pole Installation and Maintenance", "construction"),
    "D-34": ("Prefabricated Equipment", "construction"),
    "D-35": ("Pool and Spa Maintenance", "home-services"),
    "D-38": ("Sand and Water Blasting", "construction"),
    "D-39": ("Scaffolding", "construction"),
    "D-40": ("Service Station Equipment and Maintenance", "construction"),
    "D-41": ("Siding and Decking", "home-services"),
    "D-42": ("Non-Electrical Sign Installation", "construction"),
    "D-49": ("Tree Service", "home-services"),
    "D-50": ("Suspended Ceilings", "construction"),
    "D-52": ("Window Coverings", "home-services"),
    "D-53": ("Wood Tanks", "construction"),
    "D-56": ("Trenching Only", "construction"),
    "D-59": ("Hydroseed Spraying", "home-services"),
    "D-62": ("Air and Water Balancing", "home-services"),
    "D-63": ("Construction Clean-up", "construction"),
    "D-64": ("Non-specialized", "construction"),
    "D-65": ("Weatherization and Energy Conservation", "home-services"),
    "HAZ": ("Hazardous Substance Removal", "environmental-services"),
    "ASB": ("Asbestos Certification", "environmental-services"),
}
_CODE = re.compile(r"^([A-Z])[- ]?0*(\d+)$")
CONTRACTOR_LICENCE = "contractor"
INACTIVE_WORDS = ("expired", "revoked", "cancel", "inactive", "deceased", "surrender")
GENERATIONAL = frozenset({"JR", "SR", "II", "III", "IV"})


def classification_code(raw: str) -> str:
    """``C-7``, ``C7`` and ``C07`` are all ``C-7``; ``D35`` is ``D-35``; ``A`` and ``HAZ`` stay."""
    code = raw.strip().upper()
    found = _CODE.match(code)
    return f"{found.group(1)}-{found.group(2)}" if found else code


def licence_label(code: str) -> str:
    name, _ = CLASSIFICATIONS.get(code, ("", ""))
    if not name:
        return code
    return f"{code} {name}" + (" Contractor" if code[0] in "ABC" else "")


def classifications_vertical(codes: list[str]) -> str:
    """Solar when any classification is C-46; else the vertical of the first known classification."""
    if "C-46" in codes:
        return "solar"
    for code in codes:
        if code in CLASSIFICATIONS:
            return CLASSIFICATIONS[code][1]
    return "construction"


def _joined(parts: list[str], limit: int, separator: str) -> str | None:
    text = ""
    for part in parts:
        candidate = part if not text else text + separator + part
        if len(candidate) > limit:
            break
        text = candidate
    return text or None


def named_person(business_name: str, full_name: str) -> str | None:
    """The person a sole owner's or partner's licence names, from its two spellings: CSLB writes the
    name "LAST FIRST M …" and the full name "FIRST M LAST …"; what they share at the end is the
    trade ("CONSTRUCTION", "CO"), the rest of the full name is the person."""
    short, full = business_name.split(), full_name.split()
    if not short or not full or short == full or sorted(short) != sorted(full):
        return None
    common = 0
    while common < len(full) - 1 and short[-1 - common] == full[-1 - common] and full[-1 - common] not in GENERATIONAL:
        common += 1
    person = full[: len(full) - common]
    generational = [w for w in full[len(person) :] if w in GENERATIONAL]
    if not 2 <= len(person) <= 5:
        return None
    return display_name(" ".join(person + generational))


@register
class Cslb(ContactSource):
    name = "cslb"
    registry = "cslb"
    title = "California CSLB contractor licence master file"

    def read(self, opened: OpenedFile, ctx: ImportContext) -> Iterator[SourceRecord | SkipRow]:
        table = CsvTable(opened, default_header=HEADER_2020, marker="LicenseNo")
        at = {name: table.require(name) for name in ("LicenseNo", "BusinessName", "City", "State")}
        optional = ("FullBusinessName", "MailingAddress", "ZIPCode", "BusinessPhone", "BusinessType", "PrimaryStatus")
        for name in optional:
            position = table.position(name)
            if position is not None:
                at[name] = position
        classes_at = table.require("Classifications(s)", "Classifications", "Classification(s)")
        for row in table.rows():
            if isinstance(row, SkipRow):
                yield row
                continue
            values = row.values

            def get(name: str, values: list[str] = values) -> str:
                position = at.get(name)
                return " ".join(values[position].split()) if position is not None else ""

            licence = get("LicenseNo")
            if not (licence.isascii() and licence.isdigit()):
                yield SkipRow("invalid_licence_number", f"line {row.line}: {licence!r}")
                continue
            state = get("State").upper()
            if state not in STATE_CODES:
                yield SkipRow("invalid_state", f"line {row.line}: licence {licence}, state {state!r}")
                continue
            city = get("City")
            if not city:
                yield SkipRow("missing_city", f"line {row.line}: licence {licence}")
                continue
            business, full, business_type = get("BusinessName"), get("FullBusinessName"), get("BusinessType")
            if not business:
                yield SkipRow("missing_name", f"line {row.line}: licence {licence}")
                continue
            person = named_person(business, full) if business_type in ("Sole Owner", "Partnership") else None
            codes = [classification_code(c) for c in values[classes_at].split("|") if c.strip()]
            status = get("PrimaryStatus")
            people = []
            if person:
                role = "owner" if business_type == "Sole Owner" else "partner"
                people.append(Person(name=person, role=role, title="Sole Owner" if role == "owner" else "Partner"))
            yield SourceRecord(
                record_id=licence,
                kind="organization",
                active=not any(word in status.lower() for word in INACTIVE_WORDS),
                registry_status=status or None,
                contact={
                    # A sole owner's licence reads better in "FIRST LAST" order.
                    "business_name": display_name(full if person else business),
                    "street": display_name(get("MailingAddress")) or None,
                    "city": display_name(city),
                    "state": state,
                    "postal_code": postal_code(get("ZIPCode")),
                    "phone": fast_phone_e164(get("BusinessPhone")),
                    "industry": classifications_vertical(codes),
                    "specialty": _joined([CLASSIFICATIONS.get(c, (c, ""))[0] for c in codes], 200, ", "),
                    "license_type": _joined([licence_label(c) for c in codes], 120, "; "),
                    "license_number": licence,
                    "license_state": "CA",
                    # Every CSLB licence is a contractor's licence (the classifications are its
                    # endorsements): two licence numbers are two licensees (vpx.contacts.identifiers).
                    "identifiers": licence_token("CA", CONTRACTOR_LICENCE, licence),
                },
                people=people,
            )
