"""Small files in the registries' published formats, written by the tests (never copies of the
shared samples): the NPPES CSV (2018 and current layouts), the NUCC code set, the CSLB master file."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

_ADDRESS = [
    "Provider First Line Business {kind} Address",
    "Provider Second Line Business {kind} Address",
    "Provider Business {kind} Address City Name",
    "Provider Business {kind} Address State Name",
    "Provider Business {kind} Address Postal Code",
    "Provider Business {kind} Address Country Code (If outside U.S.)",
    "Provider Business {kind} Address Telephone Number",
    "Provider Business {kind} Address Fax Number",
]


def nppes_header(layout: str = "2018") -> list[str]:
    """The 329 columns of the 2015–2018 files, or the 330 of current files (``Provider Sex Code``,
    ``Certification Date``)."""
    names = [
        "NPI", "Entity Type Code", "Replacement NPI", "Employer Identification Number (EIN)",
        "Provider Organization Name (Legal Business Name)", "Provider Last Name (Legal Name)", "Provider First Name",
        "Provider Middle Name", "Provider Name Prefix Text", "Provider Name Suffix Text", "Provider Credential Text",
        "Provider Other Organization Name", "Provider Other Organization Name Type Code", "Provider Other Last Name",
        "Provider Other First Name", "Provider Other Middle Name", "Provider Other Name Prefix Text",
        "Provider Other Name Suffix Text", "Provider Other Credential Text", "Provider Other Last Name Type Code",
    ]  # fmt: skip
    for kind in ("Mailing", "Practice Location"):
        names += [template.format(kind=kind) for template in _ADDRESS]
    names += [
        "Provider Enumeration Date", "Last Update Date", "NPI Deactivation Reason Code", "NPI Deactivation Date",
        "NPI Reactivation Date", "Provider Gender Code" if layout == "2018" else "Provider Sex Code",
        "Authorized Official Last Name", "Authorized Official First Name", "Authorized Official Middle Name",
        "Authorized Official Title or Position", "Authorized Official Telephone Number",
    ]  # fmt: skip
    for n in range(1, 16):
        names += [
            f"Healthcare Provider Taxonomy Code_{n}",
            f"Provider License Number_{n}",
            f"Provider License Number State Code_{n}",
            f"Healthcare Provider Primary Taxonomy Switch_{n}",
        ]
    for n in range(1, 51):
        names += [
            f"Other Provider Identifier_{n}",
            f"Other Provider Identifier Type Code_{n}",
            f"Other Provider Identifier State_{n}",
            f"Other Provider Identifier Issuer_{n}",
        ]
    names += [
        "Is Sole Proprietor", "Is Organization Subpart", "Parent Organization LBN", "Parent Organization TIN",
        "Authorized Official Name Prefix Text", "Authorized Official Name Suffix Text",
        "Authorized Official Credential Text",
    ]  # fmt: skip
    names += [f"Healthcare Provider Taxonomy Group_{n}" for n in range(1, 16)]
    if layout != "2018":
        names.append("Certification Date")
    return names


def nppes_row(header: list[str], **fields: Any) -> list[str]:
    """A row with the given fields by short name (see ``SHORT``) or full column name."""
    values = dict.fromkeys(header, "")
    for key, value in fields.items():
        values[SHORT.get(key, key)] = str(value)
    return [values[name] for name in header]


SHORT = {
    "npi": "NPI",
    "entity": "Entity Type Code",
    "org": "Provider Organization Name (Legal Business Name)",
    "last": "Provider Last Name (Legal Name)",
    "first": "Provider First Name",
    "middle": "Provider Middle Name",
    "credential": "Provider Credential Text",
    "street": "Provider First Line Business Practice Location Address",
    "street2": "Provider Second Line Business Practice Location Address",
    "city": "Provider Business Practice Location Address City Name",
    "state": "Provider Business Practice Location Address State Name",
    "zip": "Provider Business Practice Location Address Postal Code",
    "country": "Provider Business Practice Location Address Country Code (If outside U.S.)",
    "phone": "Provider Business Practice Location Address Telephone Number",
    "deactivated": "NPI Deactivation Date",
    "reactivated": "NPI Reactivation Date",
    "ao_last": "Authorized Official Last Name",
    "ao_first": "Authorized Official First Name",
    "ao_title": "Authorized Official Title or Position",
    "ao_phone": "Authorized Official Telephone Number",
}
for _n in range(1, 16):
    SHORT[f"taxonomy{_n}"] = f"Healthcare Provider Taxonomy Code_{_n}"
    SHORT[f"licence{_n}"] = f"Provider License Number_{_n}"
    SHORT[f"licence_state{_n}"] = f"Provider License Number State Code_{_n}"
    SHORT[f"switch{_n}"] = f"Healthcare Provider Primary Taxonomy Switch_{_n}"


def csv_text(header: list[str] | None, rows: list[list[str]], *, quote_all: bool = True, newline: str = "\n") -> str:
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL, lineterminator=newline)
    if header is not None:
        writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def write_nppes(path: Path, rows: list[dict[str, Any]], *, layout: str = "2018", encoding: str = "ascii") -> Path:
    header = nppes_header(layout)
    path.write_text(csv_text(header, [nppes_row(header, **row) for row in rows]), encoding=encoding)
    return path


# A few NUCC codes, Windows-1252 like the published file (with a curly apostrophe).
NUCC_ROWS = [
    ["1223G0001X", "Dental Providers", "Dentist", "General Practice", "A dentist\u2019s general practice.", ""],
    ["122300000X", "Dental Providers", "Dentist", "", "A dentist.", ""],
    ["207Q00000X", "Allopathic & Osteopathic Physicians", "Family Medicine", "", "Family medicine.", ""],
    ["207RC0000X", "Allopathic & Osteopathic Physicians", "Internal Medicine", "Cardiovascular Disease", "", ""],
    ["251E00000X", "Agencies", "Home Health", "", "Home health agencies, \u00a7 1861.", ""],
    ["103T00000X", "Behavioral Health & Social Service Providers", "Psychologist", "", "", ""],
    ["174M00000X", "Other Service Providers", "Veterinarian", "", "", ""],
    ["261QM0801X", "Ambulatory Health Care Facilities", "Clinic/Center",
     "Mental Health (Including Community Mental Health Center)", "", ""],
]  # fmt: skip


def write_nucc(path: Path, *, newer: bool = False) -> Path:
    if newer:
        header = [
            "Code",
            "Grouping",
            "Classification",
            "Specialization",
            "Definition",
            "Notes",
            "Display Name",
            "Section",
        ]
        rows = [[*row, row[2], "Individual"] for row in NUCC_ROWS]
    else:
        header = ["Code", "Type", "Classification", "Specialization", "Definition", "Notes"]
        rows = NUCC_ROWS
    path.write_bytes(csv_text(header, rows, quote_all=False, newline="\r\n").encode("cp1252"))
    return path


CSLB_COLUMNS = 52


def cslb_row(**fields: str) -> list[str]:
    """A headerless CSLB master-file row (the 2020 layout)."""
    from vpx.registries.cslb import HEADER_2020

    values = dict.fromkeys(HEADER_2020, "")
    values.update(fields)
    return [values[name] for name in HEADER_2020]


def write_cslb(path: Path, rows: list[dict[str, str]], *, header: bool = False) -> Path:
    from vpx.registries.cslb import HEADER_2020

    text = csv_text(
        list(HEADER_2020) if header else None, [cslb_row(**r) for r in rows], quote_all=False, newline="\r\n"
    )
    path.write_text(text, encoding="ascii")
    return path
