"""The reader's fast paths give what the catalogue's own functions give: the contacts row, matching
keys, digest and search words of every record of the real samples."""

from __future__ import annotations

import hashlib
import pickle
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.registries.conftest import shared
from tests.registries.formats import write_nppes
from vpx.contacts.catalogue import contact_row, vocabulary
from vpx.contacts.normalise import display_name, person_display_name
from vpx.registries.cslb import Cslb
from vpx.registries.nppes import Nppes
from vpx.registries.reader import SkipRow, open_text
from vpx.registries.records import CONTACT_COLUMNS, Ready, SourceRecord, keys_from, row_terms
from vpx.registries.resolution import keys_of
from vpx.registries.sources import ImportContext, ReadBatch

NOW = datetime(2026, 11, 24, 12, tzinfo=UTC)
TAXONOMY = {
    "207RC0000X": ("Cardiology", "healthcare", "Allopathic & Osteopathic Physicians", "Internal Medicine"),
    "1223G0001X": ("Dentist, General Practice", "dental", "Dental Providers", "Dentist"),
    "000000000X": ("", "healthcare", "", ""),
}


def _records() -> list[SourceRecord]:
    records: list[SourceRecord] = []
    for source, path in (
        (Nppes(), shared("nppes", "npidata_pfile_sample_k0bl.csv")),
        (Cslb(), shared("licenses", "ca_cslb_MasterLicenseData_noheader.csv")),
    ):
        ctx = ImportContext.__new__(ImportContext)
        ctx.lookups = {"taxonomy": TAXONOMY}
        opened = open_text(path)
        try:
            records += [item for item in source.read(opened, ctx) if isinstance(item, SourceRecord)]
        finally:
            opened.close()
    assert len(records) > 500
    return records


def _digest_as_first_defined(record: SourceRecord) -> str:
    # The digest as the catalogue's stored records were hashed: it must not change, or every
    # re-import after an upgrade would rewrite every record.
    parts: list[str] = [record.kind, "1" if record.active else "0", record.registry_status or ""]
    if record.contact is not None:
        # Strong identifiers came later and are not digested (vpx.registries.records.UNDIGESTED).
        parts += [
            f"{key}={value}"
            for key, value in sorted(record.contact.items())
            if value is not None and key != "identifiers"
        ]
    parts += [f"{p.role}|{p.name}|{p.title}|{p.phone}" for p in record.people]
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=8).hexdigest()


def test_ready_records_match_the_catalogue_functions() -> None:
    rows: list[dict[str, Any]] = []
    tuples = []
    for record in _records():
        ready = record.ready(NOW)
        assert ready.digest == _digest_as_first_defined(record)
        assert ready.people == tuple((p.name, p.title, p.role, p.phone) for p in record.people)
        if not record.active or record.contact is None:
            assert ready.row is None and ready.keys is None
            continue
        row = contact_row(record.contact, origin="registry", now=NOW)
        assert tuple(row) == CONTACT_COLUMNS
        assert ready.row == tuple(row.values())
        if record.kind == "person":
            assert ready.keys is None  # people never merge: no keys to compute
        else:
            assert ready.keys is not None and keys_from(ready.keys) == keys_of(row)
        rows.append(row)
        tuples.append(ready.row)
    assert row_terms(tuples) == vocabulary(rows)


def test_a_batch_crosses_to_the_reader_process_as_plain_tuples() -> None:
    ready = [record.ready(NOW) for record in _records()[:50]]
    batch = ReadBatch(items=ready, rows=50, skipped=[], bytes_read=0, terms=set())
    again = pickle.loads(pickle.dumps(batch))
    assert again.items == ready and all(isinstance(item, Ready) for item in again.items)


def test_person_names_are_cased_part_by_part_as_a_whole() -> None:
    for first, middle, last, suffix, credential in [
        ("JOHN", "A", "SMITH", "", "M.D."),
        ("  JOHN ", "", "DE LA CRUZ", "JR", ""),
        ("john", "", "SMITH", "", ""),
        ("O'BRIEN", "", "MCDONALD", "III", "DDS,  MS"),
        ("LA", "", "TOYA", "", ""),
        ("", "", "", "", "MD"),
    ]:
        whole = display_name(" ".join(p for p in (first, middle, last, suffix) if p and p.strip()))
        expected = f"{whole}, {' '.join(credential.split())}" if whole and credential.strip() else whole
        assert person_display_name(first, middle, last, suffix=suffix, credential=credential) == expected


# NPPES rows as the file writes them, and as it sometimes does: mixed case, accents, stray spaces,
# no street, no licence, an unknown code, an authorized official, deactivated and broken rows.
ODD_ROWS: list[dict[str, str]] = [
    {"npi": "1000000001", "entity": "2", "org": "  ACME  DENTAL & SONS, PLLC ", "street": "12  N MAIN ST",
     "street2": "STE 4", "city": " BOISE ", "state": "id", "zip": "837021234", "phone": "2085550143",
     "ao_last": "ORTEGA", "ao_first": "MARIA", "ao_title": "CEO", "ao_phone": "(208) 555-0144",
     "taxonomy1": "1223G0001X", "licence1": "D-1", "licence_state1": "id", "switch1": "Y"},
    {"npi": "1000000002", "entity": "1", "first": "JOSÉ", "middle": "", "last": "NUÑEZ", "credential": "M.D.",
     "street": "PO BOX 12", "city": "Dallas", "state": "TX", "zip": "75201", "phone": "0000000000",
     "taxonomy1": "207RC0000X", "licence1": "", "switch1": "N", "taxonomy2": "999999999X", "switch2": "N"},
    {"npi": "1000000003", "entity": "1", "first": "mary", "middle": "A", "last": "O'BRIEN-SMITH",
     "credential": "  DDS,  MS ", "street": "", "street2": "", "city": "HOUSTON", "state": "TX", "zip": "7700",
     "phone": "713555012", "taxonomy2": "207RC0000X", "licence2": "MD1", "licence_state2": "ZZ", "switch2": "Y"},
    {"npi": "1000000004", "entity": "1", "first": "ΣΑΣ", "last": "MCDONALD", "credential": "PA-C",
     "street": "É 5TH AVE", "city": "RENO", "state": "NV", "zip": "89501", "phone": "7755550123",
     "taxonomy1": "207RC0000X", "licence1": "X", "switch1": "Y"},
    {"npi": "1000000005", "entity": "2", "org": "the medfund llc", "street": "1975\tVETERANS PKWY",
     "city": "COLUMBUS", "state": "GA", "zip": "31904", "taxonomy1": "000000000X", "switch1": "Y"},
    {"npi": "1000000006", "entity": "", "deactivated": "02/12/2016"},
    {"npi": "1000000007", "entity": "2", "org": "GONE LLC", "deactivated": "02/12/2016", "city": "X", "state": "TX"},
    {"npi": "123", "entity": "1", "first": "A", "last": "B", "city": "C", "state": "TX"},
    {"npi": "1000000008", "entity": "1", "first": "", "last": "", "credential": "MD", "city": "C", "state": "TX"},
    {"npi": "1000000009", "entity": "1", "first": "A", "last": "B", "city": "", "state": "TX"},
]  # fmt: skip


def test_nppes_rows_made_ready_directly_are_the_records_made_ready(tmp_path: Path) -> None:
    for path in (
        shared("nppes", "npidata_pfile_sample_k0bl.csv"),
        write_nppes(tmp_path / "odd.csv", ODD_ROWS, encoding="utf-8"),
    ):
        ctx = ImportContext.__new__(ImportContext)
        ctx.lookups, ctx.now = {"taxonomy": TAXONOMY}, NOW
        opened = open_text(path)
        try:
            records = list(Nppes().read(opened, ctx))
        finally:
            opened.close()
        opened = open_text(path)
        try:
            made = list(Nppes().read_ready(opened, ctx))
        finally:
            opened.close()
        assert len(made) == len(records)
        for direct, record in zip(made, records, strict=True):
            if isinstance(record, SkipRow):
                assert isinstance(direct, SkipRow) and (direct.reason, direct.detail) == (record.reason, record.detail)
            else:
                assert direct == record.ready(NOW)
