"""permit_filed signals from city permit CSVs (issue 4): one importer driven by a per-city mapping;
fixtures of our own in the Chicago and San Francisco layouts (always on) and the real samples in
../shared/data/permits (skipped where absent); the real `vpx` command with --json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.conftest import SHARED_DATA
from tests.test_cli import vpx
from vpx.models import Contact, Signal
from vpx.signals.pipeline import ingest_events
from vpx.signals.sources import permits

pytestmark = pytest.mark.asyncio

SAMPLES = SHARED_DATA / "permits"
CHICAGO_SAMPLE = SAMPLES / "chicago_building_permits_cranes_2016.csv"
SF_SAMPLE = SAMPLES / "sf_dbi_building_permits_first2000.csv"

GROUP = ",".join(
    f"CONTRACTOR_{n}_{f}" for n in (1, 2) for f in ("TYPE", "NAME", "ADDRESS", "CITY", "STATE", "ZIPCODE", "PHONE")
)
CHICAGO_HEADER = (
    "ID,PERMIT#,  PERMIT_TYPE,         ISSUE_DATE,        ESTIMATED_COST,STREET_NUMBER,STREET DIRECTION,STREET_NAME,"
    f"  SUFFIX,WORK_DESCRIPTION,{GROUP}"
)
CHICAGO_ROWS = [
    # The owner comes first; the general contractor is the business the signal is about.
    '1,100637362,PERMIT - NEW CONSTRUCTION,03/22/2016,$20000.00,1118,N,STATE,ST,"INSTALL TOWER CRANE, 12 STORY",'
    "OWNER,EVAN MEISTER,540 W MADISON,CHICAGO,IL,60661,,"
    "CONTRACTOR-GENERAL CONTRACTOR,JAMES MCHUGH CONSTRUCTION CO,1737 S MICHIGAN AVE,CHICAGO,IL,60616-,(312)986-8000 x",
    "2,100637400,PERMIT - SOLAR PANELS,04/02/2016,$1.00,10,W,ELM,ST,ROOFTOP SOLAR ARRAY,"
    "CONTRACTOR-ELECTRICAL,SUNNY DAYS ELECTRIC,5 OAK ST,EVANSTON,IL,60201,(847)555-0101 X,,,,,,,",
    "3,100637401,PERMIT - WRECKING,,$5000.00,1,N,MAIN,ST,DEMOLITION,"
    "CONTRACTOR-WRECKING,ACME WRECKING,1 A ST,CHICAGO,IL,60601,,,,,,,,",
    "4,100637402,PERMIT - EASY PERMIT,05/01/2016,$900.00,2,N,MAIN,ST,REPAIR,OWNER,JANE DOE,,,,,,,,,,,,,",
]
SF_CSV = (
    "Permit Number,Permit Type,Permit Type Definition,Permit Creation Date,Street Number,Street Number Suffix,"
    "Street Name,Street Suffix,Description,Estimated Cost\n"
    "201810011823,8,otc alterations permit,10/01/2018,1,,Market,St,kitchen remodel,25000\n"
)


def chicago_file(tmp_path: Path) -> Path:
    path = tmp_path / "chicago.csv"
    path.write_text(CHICAGO_HEADER + "\n" + "\n".join(CHICAGO_ROWS) + "\n")
    return path


async def _import(app: FastAPI, path: Path, city: str) -> tuple[Any, list[permits.PermitSkip]]:
    skipped: list[permits.PermitSkip] = []
    events = permits.read_permits(path, permits.load_mapping(city), skipped)
    report = await ingest_events(app.state.database, events, settings=app.state.settings, clock=app.state.clock)
    return report, skipped


async def test_a_chicago_permit_becomes_a_warm_signal_about_its_general_contractor(
    app: FastAPI, tmp_path: Path
) -> None:
    report, skipped = await _import(app, chicago_file(tmp_path), "chicago")
    assert report.ingested == 2
    assert [(s.line, s.reason) for s in skipped] == [(4, "no_date"), (5, "no_business")]
    async with app.state.database.read_sessions() as session:
        signals = {s.source_record_id: s for s in await session.scalars(select(Signal))}
        crane = signals["100637362"]
        contact = await session.get(Contact, crane.contact_id)
    assert crane.category == "permit_filed" and crane.source == "permits:chicago"
    assert crane.industry == "construction" and crane.intent_level == "warm" and crane.source_status == "available"
    assert crane.state == "IL" and crane.city == "Chicago" and crane.observed_at.date().isoformat() == "2016-03-22"
    assert crane.evidence["budget"] == "$20,000.00" and crane.evidence["vendor_named"] == "JAMES MCHUGH CONSTRUCTION CO"
    assert crane.evidence["site"] == "1118 N STATE ST, Chicago, IL" and crane.topic == "permit - new construction"
    assert contact is not None and contact.phone == "+13129868000" and contact.state == "IL"
    assert contact.city == "Chicago" and "MCHUGH" in contact.business_name.upper()
    solar = signals["100637400"]
    assert solar.industry == "solar" and "budget" not in solar.evidence  # $1.00 is a placeholder
    again, _ = await _import(app, chicago_file(tmp_path), "chicago")
    assert again.ingested == 0 and again.duplicates == 2


async def test_a_city_without_contractors_skips_every_row_with_its_reason(app: FastAPI, tmp_path: Path) -> None:
    path = tmp_path / "sf.csv"
    path.write_text(SF_CSV)
    report, skipped = await _import(app, path, "sf")
    assert report.ingested == 0 and [(s.line, s.reason) for s in skipped] == [(2, "no_business")]


async def test_a_file_of_another_layout_is_refused(app: FastAPI, tmp_path: Path) -> None:
    path = tmp_path / "sf.csv"
    path.write_text(SF_CSV)
    with pytest.raises(ValueError, match="not a Chicago permits file"):
        await _import(app, path, "chicago")
    with pytest.raises(ValueError, match="known cities: chicago, sf"):
        permits.load_mapping("gotham")


@pytest.mark.skipif(not CHICAGO_SAMPLE.is_file(), reason=f"{SAMPLES} is not on this machine")
async def test_the_real_chicago_sample(app: FastAPI) -> None:
    report, skipped = await _import(app, CHICAGO_SAMPLE, "chicago")
    reasons = sorted({s.reason for s in skipped})
    # 441 permits: 4 without an issue date, 2 naming only owners or expeditors.
    assert report.ingested == 435 and len(skipped) == 6 and reasons == ["no_business", "no_date"]
    async with app.state.database.read_sessions() as session:
        first = await session.scalar(select(Signal).where(Signal.source_record_id == "100637362"))
        assert first is not None
        contact = await session.get(Contact, first.contact_id)
    assert first.evidence["vendor_named"] == "JAMES MCHUGH CONSTRUCTION CO" and first.evidence["budget"] == "$20,000.00"
    assert first.evidence["work"].startswith("INSTALL FREE STANDING LIEBHERR 316 EC-H 12 LITRONIC TOWER CRANE")
    assert contact is not None and contact.phone == "+13129868000"
    again, _ = await _import(app, CHICAGO_SAMPLE, "chicago")
    assert again.ingested == 0 and again.duplicates == 435


@pytest.mark.skipif(not SF_SAMPLE.is_file(), reason=f"{SAMPLES} is not on this machine")
async def test_the_real_sf_sample_names_no_business(app: FastAPI) -> None:
    report, skipped = await _import(app, SF_SAMPLE, "sf")
    assert report.ingested == 0 and len(skipped) == 2000 and {s.reason for s in skipped} == {"no_business"}


async def test_the_cli(app: FastAPI, database_url: str, tmp_path: Path) -> None:
    path = str(chicago_file(tmp_path))
    result = vpx(database_url, "signals", "import", "permits", path, "--city", "chicago")
    assert result["source"] == "permits:chicago" and result["ingested"] == 2 and result["rows_read"] == 4
    assert result["skipped_by_reason"] == {"no_business": 1, "no_date": 1}
    bad = vpx(database_url, "signals", "import", "permits", path, "--city", "gotham", check=False)
    assert bad["error"]["code"] == "invalid_parameters" and "chicago, sf" in bad["error"]["message"]
