"""funding_ma signals from EDGAR index files (issue 4): offerings and business combinations of filers
that are companies of the catalogue; 8-Ks skipped (the index names no items); fixtures of our own in
the master layout (always on) and the real daily index in ../shared/data/sec (skipped where absent)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.conftest import SHARED_DATA
from tests.factories import Factory
from tests.test_cli import vpx
from vpx.models import Company, Signal
from vpx.signals.pipeline import ingest_events
from vpx.signals.sources import edgar

pytestmark = pytest.mark.asyncio

SAMPLE = SHARED_DATA / "sec" / "edgar_daily_master.20200103.idx"
PREAMBLE = (
    "Description:           Daily Index of EDGAR Dissemination Feed\nLast Data Received:    Jan  3, 2020\n \n"
    "CIK|Company Name|Form Type|Date Filed|File Name\n" + "-" * 80 + "\n"
)
LINES = [
    "111|Acme Builders LLC|D|20200103|edgar/data/111/0000000111-20-000001.txt",
    "111|Acme Builders LLC|8-K|20200103|edgar/data/111/0000000111-20-000002.txt",
    "111|Acme Builders LLC|10-K|20200103|edgar/data/111/0000000111-20-000003.txt",
    "222|Bolt Dental Group Inc|S-4/A|20200103|edgar/data/222/0000000222-20-000009.txt",
    "333|Unknown Fund LP|D|20200103|edgar/data/333/0000000333-20-000001.txt",
    "not a line",
]


async def link(app: FastAPI, factory: Factory, cik: int, name: str, **fields: str) -> str:
    contact = await factory.contact(business_name=name, phone=f"+1303555{cik % 10_000:04d}", **fields)
    now = datetime.now(UTC)
    async with app.state.database.write_sessions() as session, session.begin():
        session.add(
            Company(
                cik=cik, name=name, name_key=name.lower(), contact_id=int(contact[3:]), created_at=now, updated_at=now
            )
        )
    return contact


async def _import(app: FastAPI, path: Path) -> tuple[object, list[edgar.FilingSkip]]:
    skipped: list[edgar.FilingSkip] = []
    filings = list(edgar.relevant_filings(path, skipped))
    async with app.state.database.read_sessions() as session:
        events = await edgar.filing_events(session, filings, skipped)
    report = await ingest_events(app.state.database, events, settings=app.state.settings, clock=app.state.clock)
    return report, skipped


async def test_offerings_and_combinations_of_catalogue_companies(
    app: FastAPI, factory: Factory, tmp_path: Path
) -> None:
    acme = await link(app, factory, 111, "Acme Builders LLC", industry="construction")
    bolt = await link(app, factory, 222, "Bolt Dental Group Inc", industry="dental", state="TX", city="Austin")
    path = tmp_path / "master.20200103.idx"
    path.write_text(PREAMBLE + "\n".join(LINES) + "\n")
    report, skipped = await _import(app, path)
    assert report.ingested == 2  # type: ignore[attr-defined]
    assert sorted(s.reason for s in skipped) == ["8k_items_unknown", "company_not_in_catalogue", "malformed_row"]
    async with app.state.database.read_sessions() as session:
        signals = {s.source_record_id: s for s in await session.scalars(select(Signal))}
    offering = signals["0000000111-20-000001:111"]
    assert offering.category == "funding_ma" and offering.source == "edgar" and offering.industry == "construction"
    assert offering.contact_id == int(acme[3:]) and offering.state == "CO"
    assert offering.intent_level == "warm" and offering.observed_at.date().isoformat() == "2020-01-03"
    assert offering.evidence["filing"] == "D" and offering.evidence["budget"].startswith("new capital")
    merger = signals["0000000222-20-000009:222"]
    assert merger.industry == "dental" and merger.state == "TX" and merger.contact_id == int(bolt[3:])
    assert merger.evidence["need"] == "business combination" and merger.evidence["filing"] == "S-4/A"
    again, _ = await _import(app, path)
    assert again.ingested == 0 and again.duplicates == 2  # type: ignore[attr-defined]


@pytest.mark.skipif(not SAMPLE.is_file(), reason=f"{SAMPLE.parent} is not on this machine")
async def test_the_real_daily_index(app: FastAPI, factory: Factory) -> None:
    await link(app, factory, 1045610, "Prologis, L.P.", industry="real-estate")
    await link(app, factory, 1413507, "SRC Energy Inc.", industry="energy-utilities")
    expected = []
    for line in SAMPLE.read_text().splitlines():
        parts = line.split("|")
        if len(parts) == 5 and parts[0] in ("1045610", "1413507") and parts[2].removesuffix("/A") in edgar.FORMS:
            expected.append(parts[4].rsplit("/", 1)[-1].removesuffix(".txt") + ":" + parts[0])
    report, skipped = await _import(app, SAMPLE)
    assert report.ingested == len(expected) >= 2  # type: ignore[attr-defined]
    assert "company_not_in_catalogue" in {s.reason for s in skipped}
    async with app.state.database.read_sessions() as session:
        found = sorted(s.source_record_id or "" for s in await session.scalars(select(Signal)))
        prologis = await session.scalar(select(Signal).where(Signal.source_record_id == "0001047469-20-000032:1045610"))
    assert found == sorted(expected)
    assert prologis is not None and prologis.evidence["filing"] == "S-4" and prologis.industry == "real-estate"


async def test_the_cli(app: FastAPI, factory: Factory, database_url: str, tmp_path: Path) -> None:
    await link(app, factory, 111, "Acme Builders LLC", industry="construction")
    path = tmp_path / "master.idx"
    path.write_text(PREAMBLE + "\n".join(LINES) + "\n")
    result = vpx(database_url, "signals", "import", "edgar", str(path))
    assert result["source"] == "edgar" and result["ingested"] == 1 and result["filings_considered"] == 3
    assert result["skipped_by_reason"] == {"8k_items_unknown": 1, "company_not_in_catalogue": 2, "malformed_row": 1}
    garbage = tmp_path / "garbage.idx"
    garbage.write_text("hello\n")
    failed = vpx(database_url, "signals", "import", "edgar", str(garbage), check=False)
    assert failed["error"]["code"] == "unexpected_layout"
