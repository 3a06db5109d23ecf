"""EDGAR's daily indexes kept in sync, on both databases, against a fake of the SEC's daily-index
tree on loopback that refuses an undeclared User-Agent: every business day's index since the last,
in order, a holiday's 404 passed over, the most recent day not yet published asked again, each day
through the company import and the filing signals, ten requests a second at most; a source without a
User-Agent naming someone and an email address refused at add."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.factories import Factory
from tests.sources.conftest import add_source, run_source, source_row
from tests.sources.portals import EDGAR_ROOT, edgar_index, edgar_path, sec_gate
from tests.sources.publisher import Publisher
from tests.sources.test_cli import vpx
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.models import Company, Signal

AGENT = "Vpx Test Operator ops@example.org"
NOVEMBER = [date(2026, 11, d) for d in (9, 10, 12, 13)]  # 11 November: Veterans Day, no index


def filings(day: date) -> list[str]:
    stamp = f"{day:%Y%m%d}"
    cik = f"9{day.day:02d}"
    lines = [f"{cik}|Filer Number {day.day} Inc|10-Q|{stamp}|edgar/data/{cik}/0000000{cik}-26-000001.txt"]
    if day.day == 12:
        lines.append(f"111|ACME BUILDERS LLC|D|{stamp}|edgar/data/111/0000000111-26-000001.txt")
    return lines


async def test_every_business_day_since_the_last_in_order(
    app: FastAPI, settings: Settings, publisher: Publisher, clock: FixedClock, factory: Factory
) -> None:
    publisher.gate = sec_gate
    for day in NOVEMBER:
        publisher.serve(edgar_path(day), edgar_index(day, filings(day)))
    contact = await factory.contact(business_name="Acme Builders LLC", industry="construction")
    await add_source(app, "sec", "edgar-daily", publisher.url(EDGAR_ROOT), options={"user_agent": AGENT})
    # Sunday 15 November: a first run reads the five business days before it (and today, a Sunday: none).
    report = await run_source(app, settings, "sec")
    assert report.status == "ok", report.error
    asked = publisher.seen
    assert [s.path for s in asked] == [edgar_path(date(2026, 11, d)) for d in (9, 10, 11, 12, 13)]
    assert [s.status for s in asked] == [200, 200, 404, 200, 200]
    assert {s.headers["user-agent"] for s in asked} == {AGENT}
    # Ten requests a second at most: n requests span at least (n - 1) tenths of a second. Measured over
    # the run, as the fake saw them arrive (one arrival delayed by a busy machine shortens one gap).
    assert asked[-1].at - asked[0].at >= 0.1 * (len(asked) - 1) * 0.75
    assert [(f.name, f.status) for f in report.files] == [
        ("master.20261109.idx", "applied"), ("master.20261109.idx (filings)", "applied"),
        ("master.20261110.idx", "applied"), ("master.20261110.idx (filings)", "applied"),
        ("master.20261111.idx", "skipped"),
        ("master.20261112.idx", "applied"), ("master.20261112.idx (filings)", "applied"),
        ("master.20261113.idx", "applied"), ("master.20261113.idx (filings)", "applied"),
    ]  # fmt: skip
    assert report.files[4].note == "no index that day (a holiday)"
    # The filers became companies, Acme was linked to its contact, and its Form D became a signal.
    assert (report.created, report.ingested) == (5 + 1, 1)
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(select(func.count()).select_from(Company)) == 5
        [signal] = list(await session.scalars(select(Signal)))
    assert (signal.category, signal.contact_id, signal.source_record_id) == (
        "funding_ma", int(contact[3:]), "0000000111-26-000001:111"
    )  # fmt: skip
    source = await source_row(app, "sec")
    assert source.watermark == {"day": "2026-11-13"}
    assert source.newest_record_at == datetime(2026, 11, 13, tzinfo=UTC)

    # Tuesday: Monday's index is out, Tuesday's not yet (built from 10 p.m. New York time).
    clock.set(datetime(2026, 11, 17, 12, 0, tzinfo=UTC))
    monday = date(2026, 11, 16)
    publisher.serve(edgar_path(monday), edgar_index(monday, filings(monday)))
    publisher.seen.clear()
    second = await run_source(app, settings, "sec")
    assert second.status == "ok", second.error
    assert [(s.path, s.status) for s in publisher.seen] == [
        (edgar_path(monday), 200), (edgar_path(date(2026, 11, 17)), 404)
    ]  # fmt: skip
    assert (second.files[-1].name, second.files[-1].status) == ("master.20261117.idx", "not_modified")
    assert (await source_row(app, "sec")).watermark == {"day": "2026-11-16"}

    # Tuesday's index published: the next run reads it alone; then nothing is left to read.
    tuesday = date(2026, 11, 17)
    publisher.serve(edgar_path(tuesday), edgar_index(tuesday, filings(tuesday)))
    clock.set(datetime(2026, 11, 18, 4, 0, tzinfo=UTC))  # 11 p.m. in New York, still the 17th there
    third = await run_source(app, settings, "sec")
    assert (third.status, third.requests) == ("ok", 1), third.error
    assert (await source_row(app, "sec")).watermark == {"day": "2026-11-17"}
    nothing = await run_source(app, settings, "sec")
    assert (nothing.status, nothing.requests) == ("not_modified", 0)


async def test_a_url_that_is_not_the_daily_index_root_fails_the_run(
    app: FastAPI, settings: Settings, publisher: Publisher
) -> None:
    await add_source(
        app, "sec", "edgar-daily", publisher.url("/Archives/edgar/"),
        options={"user_agent": AGENT, "since": "2026-11-02"},
    )  # fmt: skip
    report = await run_source(app, settings, "sec")
    assert report.status == "failed" and report.error is not None and report.error["code"] == "unexpected_layout"
    assert "no EDGAR daily index for 5 business days in a row (2026-11-02 to 2026-11-06" in report.error["message"]


async def test_a_source_without_a_declared_user_agent_is_refused_at_add(app: FastAPI, settings: Settings) -> None:
    url = "https://www.sec.gov/Archives/edgar/daily-index/"
    missing = await vpx(settings, "sources", "add", "sec", "edgar-daily", "--url", url, code=2)
    assert missing["error"]["message"].startswith(
        "--option user_agent: is required for edgar-daily: the SEC requires a User-Agent naming you and an email "
        "address"
    )
    for agent in ("vpx/1.0", "ops@example.org"):
        refused = await vpx(
            settings, "sources", "add", "sec", "edgar-daily", "--url", url, "--option", f"user_agent={agent}", code=2
        )
        assert refused["error"]["message"].startswith(
            "--option user_agent: the SEC requires a User-Agent naming you and an email address"
        ), agent
    added = await vpx(
        settings, "sources", "add", "sec", "edgar-daily", "--url", url, "--option", f"user_agent={AGENT}",
        "--option", "since=2026-11-02",
    )  # fmt: skip
    assert added["options"] == {"user_agent": AGENT, "since": "2026-11-02"}


async def test_the_real_daily_index_sample(
    app: FastAPI, settings: Settings, publisher: Publisher, clock: FixedClock
) -> None:
    from tests.conftest import SHARED_DATA

    sample = SHARED_DATA / "sec" / "edgar_daily_master.20200103.idx"
    if not sample.is_file():
        pytest.skip(f"the shared EDGAR daily index sample is not at {sample}")
    publisher.gate = sec_gate
    publisher.serve(edgar_path(date(2020, 1, 3)), sample.read_bytes())
    clock.set(datetime(2020, 1, 4, 12, 0, tzinfo=UTC))  # the Saturday after
    await add_source(
        app, "sec", "edgar-daily", publisher.url(EDGAR_ROOT), options={"user_agent": AGENT, "since": "2020-01-03"}
    )
    report = await run_source(app, settings, "sec")
    assert (report.status, report.requests, report.rows_read) == ("ok", 1, 7_989), report.error  # as `vpx import`
    assert (await source_row(app, "sec")).watermark == {"day": "2020-01-03"}
