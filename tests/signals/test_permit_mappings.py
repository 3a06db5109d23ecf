"""Any city's permits through a mapping file: the worked example (Metro Nashville's permit
applications: epoch-millisecond dates, an empty issued date falling back to the entry date, one
contractor column with "SELF CONTRACTOR …" placeholders), every key of the format, and a bad mapping
refused before any row is read, naming its key and the file's header."""

from __future__ import annotations

import csv
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.test_cli import vpx
from vpx.models import Contact, Signal
from vpx.signals.pipeline import ingest_events
from vpx.signals.sources import permits
from vpx.signals.sources.permit_mapping import MappingError, parse_mapping

ROOT = Path(__file__).resolve().parents[2]
NASHVILLE = ROOT / "tests" / "signals" / "fixtures" / "nashville_permit_applications.csv"
NASHVILLE_MAPPING = ROOT / "docs" / "examples" / "nashville-permits.toml"


def _rows() -> list[dict[str, str]]:
    with NASHVILLE.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


async def _import(app: FastAPI, path: Path, mapping: permits.PermitMapping) -> tuple[Any, permits.PermitReading]:
    reading = permits.PermitReading()
    events = permits.read_permits(path, mapping, [], reading)
    report = await ingest_events(app.state.database, events, settings=app.state.settings, clock=app.state.clock)
    return report, reading


async def test_nashville_imports_through_its_mapping(app: FastAPI) -> None:
    rows = _rows()
    assert len(rows) <= 200
    report, reading = await _import(app, NASHVILLE, permits.load_mapping_file(NASHVILLE_MAPPING))
    skipped = Counter(s.reason for s in reading.skipped)
    assert reading.rows_read == len(rows) == 120
    assert skipped == {"placeholder_contractor": 13, "no_date": 2, "no_business": 1, "no_permit_number": 1}
    # One permit number is on two rows (two addresses): one signal.
    assert (report.ingested, report.duplicates) == (102, 1)
    assert len(reading.contractors) == 18 and report.contacts_created == 18

    async with app.state.database.read_sessions() as session:
        signals = list(await session.scalars(select(Signal).where(Signal.source == "permits:nashville")))
        per_contact = Counter(s.contact_id for s in signals)
        makers = list(await session.scalars(select(Contact).where(Contact.name_key == "maker construction")))
    # One contractor is one contact, however many permits it holds.
    held = [r for r in rows if r["Contact"] == "MAKER CONSTRUCTION LLC" and r["Permit__"]]
    dated = sum(1 for r in held if r["Date_Entered"] or r["Date_Issued"])
    assert len(makers) == 1 and per_contact[makers[0].id] == dated
    # Each signal's date is the permit's: the issue date when there is one, else the entry date.
    by_number = {s.source_record_id: s for s in signals}
    checked: Counter[str] = Counter()
    seen: set[str] = set()
    for row in rows:
        signal = by_number.get(row["Permit__"])
        if signal is None or row["Permit__"] in seen:  # the second row of the repeated number
            continue
        seen.add(row["Permit__"])
        millis = int(row["Date_Issued"] or row["Date_Entered"])
        assert signal.observed_at == datetime.fromtimestamp(millis / 1000, UTC), row["Permit__"]
        checked["issued" if row["Date_Issued"] else "entered"] += 1
        if row["Date_Issued"]:
            assert signal.evidence["timeline"].startswith("permit issued ")
        else:
            assert signal.evidence["timeline"].endswith("(Date_Entered)")
    assert checked["issued"] >= 15 and checked["entered"] >= 60
    assert {s.city for s in signals} == {"Nashville"} and {s.state for s in signals} == {"TN"}

    again, _ = await _import(app, NASHVILLE, permits.load_mapping_file(NASHVILLE_MAPPING))
    assert (again.ingested, again.duplicates, again.contacts_created) == (0, 103, 0)


async def test_the_cli_dry_run_writes_nothing_and_the_import_writes(app: FastAPI, database_url: str) -> None:
    args = ("signals", "import", "permits", str(NASHVILLE), "--mapping", str(NASHVILLE_MAPPING))
    dry = vpx(database_url, *args, "--dry-run", "--show", "3")
    assert dry["dry_run"] is True and dry["rows_read"] == 120 and dry["signals"] == 103
    assert dry["skipped_by_reason"] == {
        "no_business": 1,
        "no_date": 2,
        "no_permit_number": 1,
        "placeholder_contractor": 13,
    }
    assert len(dry["first"]) == 3 and dry["first"][0]["contractor"]["city"] == "Nashville"
    assert dry["distinct_contractors"] == 18
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(select(func.count()).select_from(Signal)) == 0
    done = vpx(database_url, *args)
    assert (done["source"], done["rows_read"], done["ingested"], done["contacts_created"]) == (
        "permits:nashville", 120, 102, 18
    )  # fmt: skip
    both = vpx(database_url, "signals", "import", "permits", str(NASHVILLE), check=False)
    assert both["error"]["code"] == "invalid_parameters"  # neither --city nor --mapping


MINIMAL = """
city = "Austin"
state = "TX"
date_format = "%m/%d/%Y"
[columns]
permit_number = "Permit Num"
issued = ["Issued Date", "Applied Date"]
[contractors]
name = "Contractor Company Name"
phone = "Contractor Phone"
ignore_names = ["^owner$"]
"""


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (("Permit Num", "Permit Number"), "columns.permit_number"),
        (('"Applied Date"', '"Applied"'), "columns.issued"),
        (('phone = "Contractor Phone"', 'phone = "Phone"'), "contractors.phone"),
    ],
)
def test_a_column_the_file_lacks_is_named_with_the_header(tmp_path: Path, change: tuple[str, str], key: str) -> None:
    path = tmp_path / "austin.csv"
    path.write_text(
        "Permit Num,Issued Date,Applied Date,Contractor Company Name,Contractor Phone\nP1,,01/02/2025,Acme,\n"
    )
    mapping = parse_mapping(MINIMAL.replace(*change), slug="austin", origin="austin.toml")
    seen: list[permits.PermitSkip] = []
    events = permits.read_permits(path, mapping, seen)
    with pytest.raises(MappingError) as raised:
        next(events)
    message = str(raised.value)
    assert message.startswith(f"austin.toml: {key}: no column") and "Permit Num, Issued Date" in message
    assert raised.value.code == "invalid_mapping" and seen == []  # before any row


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('date_format = "%m/%d/%Y"', "date_format"),
        ("", "state"),
        ('date_format = "%Q"', "date_format"),
        ('timezone = "Mars/Olympus"', "timezone"),
        ('encoding = "klingon-8"', "encoding"),
        ("colour = 1", "colour"),
        ("[columns.extra]\n", "columns.extra"),
        ('[contractors]\nname = "C_{n}"', "contractors.count"),
        ('[contractors]\nname = "C"\nignore_names = ["(unclosed"]', "contractors.ignore_names"),
        ("[oops", ""),
    ],
)
def test_a_bad_mapping_is_one_clear_error(text: str, key: str) -> None:
    base = 'city = "Austin"\nstate = "TX"\n'
    if key != "date_format" or text.startswith('date_format = "%Q"'):
        base += 'date_format = "%m/%d/%Y"\n' if key != "date_format" else ""
    columns = '[columns]\npermit_number = "P"\nissued = "I"\n'
    if key == "state":
        source = 'city = "Austin"\nstate = "ZZ"\ndate_format = "iso"\n' + columns
    elif key == "date_format" and "%Q" not in text:
        source = base + 'date_format = "sometimes"\n' + columns
    elif key.startswith(("columns", "contractors")):
        source = base + columns + text
    else:
        source = base + text + "\n" + columns
    with pytest.raises(MappingError) as raised:
        parse_mapping(source, slug="x", origin="x.toml")
    assert str(raised.value).startswith("x.toml: ") and key in str(raised.value)


def test_the_cli_refuses_a_bad_mapping_with_its_code(tmp_path: Path, database_url: str) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(NASHVILLE_MAPPING.read_text().replace("Permit__", "Permit #"))
    result = vpx(database_url, "signals", "import", "permits", str(NASHVILLE), "--mapping", str(bad), check=False)
    assert result["error"]["code"] == "invalid_mapping"
    assert (
        "columns.permit_number" in result["error"]["message"]
        and "Permit__, Permit_Type_Description" in (result["error"]["message"])
    )


@pytest.mark.parametrize(
    ("date_format", "value", "expected"),
    [
        ("iso", "2025-01-02", datetime(2025, 1, 2, 6, tzinfo=UTC)),
        ("iso", "2025-01-02T10:00:00Z", datetime(2025, 1, 2, 10, tzinfo=UTC)),
        ("epoch_s", "1735797600", datetime(2025, 1, 2, 6, tzinfo=UTC)),
        ("epoch_ms", "1735797600000", datetime(2025, 1, 2, 6, tzinfo=UTC)),
        ("%m/%d/%Y", "01/02/2025", datetime(2025, 1, 2, 6, tzinfo=UTC)),
        ("%m/%d/%Y", "01/02/2025 12:00:00 AM", datetime(2025, 1, 2, 6, tzinfo=UTC)),  # the date part
        ("%Y%m%d", "20250102", datetime(2025, 1, 2, 6, tzinfo=UTC)),
        ("%m/%d/%Y", "2025-01-02", None),
        ("epoch_ms", "soon", None),
    ],
)
def test_date_formats(date_format: str, value: str, expected: datetime | None) -> None:
    text = MINIMAL.replace('"%m/%d/%Y"', f'"{date_format}"').replace(
        'state = "TX"', 'state = "TX"\ntimezone = "America/Chicago"'
    )
    mapping = parse_mapping(text, slug="austin", origin="austin.toml")
    assert mapping.parse_date(value) == expected


async def test_encodings_and_numbered_contractor_groups_with_placeholders(app: FastAPI, tmp_path: Path) -> None:
    header = "No,Date,GC_1_TYPE,GC_1_NAME,GC_1_PHONE,GC_2_TYPE,GC_2_NAME,GC_2_PHONE\n"
    rows = [
        "1,2025-03-01,GENERAL,SELF CONTRACTOR,,ELECTRICAL,CAFÉ ÉLECTRIQUE LLC,(512) 555-0101\n",
        "2,2025-03-02,GENERAL,OWNER-BUILDER,,,,\n",
        "3,2025-03-03,GENERAL,Señor Roofing,512 555 0102,,,\n",
    ]
    path = tmp_path / "austin.csv"
    path.write_bytes((header + "".join(rows)).encode("cp1252"))
    text = """
city = "Austin"
state = "TX"
date_format = "iso"
encoding = "{encoding}"
[columns]
permit_number = "No"
issued = "Date"
[contractors]
count = 2
name = "GC_{{n}}_NAME"
type = "GC_{{n}}_TYPE"
phone = "GC_{{n}}_PHONE"
prefer = ["GENERAL"]
ignore_names = ["^SELF CONTRACTOR", "^OWNER"]
"""
    for encoding in ("auto", "cp1252"):
        mapping = parse_mapping(text.format(encoding=encoding), slug=f"austin-{encoding}", origin="austin.toml")
        report, reading = await _import(app, path, mapping)
        assert reading.encoding == "cp1252" or encoding == "auto"
        assert report.ingested == 2 and [s.reason for s in reading.skipped] == ["placeholder_contractor"]
    async with app.state.database.read_sessions() as session:
        names = sorted(await session.scalars(select(Contact.business_name)))
    assert names == ["CAFÉ ÉLECTRIQUE LLC", "Señor Roofing"]
