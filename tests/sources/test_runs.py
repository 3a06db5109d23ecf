"""Runs of sources on both databases: one run per source at a time (a lease across processes, a killed
run's lease expiring), the real worker loop picking a due source, a publisher down for longer than a
run waits (failing at once, retried later and later, never in a tight loop), a 429 honoured, a permit
export re-read when it changes, freshness and the stale warning."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.registries.formats import write_cslb, write_nucc
from tests.sources.conftest import QUICK, add_source, later, run_source, source_row
from tests.sources.publisher import Fault, Publisher
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.models import Contact, Signal
from vpx.secrets import load_box
from vpx.sources import runner
from vpx.sources import service as source_service
from vpx.worker.loop import Worker

LICENCE = {"LicenseNo": "1000001", "BusinessName": "ACME ROOFING INC", "City": "FRESNO", "State": "CA",
           "ZIPCode": "93721", "BusinessPhone": "(559) 555 0100", "BusinessType": "Corporation",
           "PrimaryStatus": "CLEAR", "Classifications(s)": "C39"}  # fmt: skip
PERMITS_HEADER = "Permit No,Issued,Type,Work,Valuation,Site Address,Contractor,Contractor City,Contractor State"
PERMITS = [
    "P-1,11/02/2026,ROOFING,Tear off and reroof,18000,12 Pine St,Summit Roofing LLC,Ogden,UT",
    "P-2,11/03/2026,PLUMBING,Repipe,9000,7 Oak Ave,Wasatch Plumbing,Provo,UT",
]
MAPPING = """
city = "Ogden"
state = "UT"
date_format = "%m/%d/%Y"

[columns]
permit_number = "Permit No"
permit_type = "Type"
issued = "Issued"
cost = "Valuation"
description = "Work"
address = "Site Address"

[contractors]
name = "Contractor"
city = "Contractor City"
state = "Contractor State"
"""


def export(*rows: str) -> bytes:
    return ("\n".join([PERMITS_HEADER, *rows]) + "\n").encode()


async def test_two_runs_of_one_source_at_once_read_it_once(
    app: FastAPI, settings: Settings, publisher: Publisher, tmp_path: Path
) -> None:
    publisher.serve("/nucc.csv", write_nucc(tmp_path / "nucc.csv").read_bytes())
    publisher.fail_next("/nucc.csv", Fault(delay=1.0))  # slow enough for the second run to find it held
    await add_source(app, "nucc", "nucc", publisher.url("/nucc.csv"))
    first, second = await asyncio.gather(
        run_source(app, settings, "nucc", owner="one"),
        run_source(app, settings, "nucc", owner="two"),
        return_exceptions=True,
    )
    outcomes = sorted([first, second], key=lambda o: isinstance(o, Exception))
    assert not isinstance(outcomes[0], BaseException) and outcomes[0].created == 8
    assert isinstance(outcomes[1], runner.SourceBusy) and "is being run by" in str(outcomes[1])
    assert len(publisher.requests_for("/nucc.csv")) == 1
    assert (await source_row(app, "nucc")).lease_owner is None  # let go at the end


async def test_a_killed_runs_lease_expires(
    app: FastAPI, settings: Settings, publisher: Publisher, clock: FixedClock, tmp_path: Path
) -> None:
    publisher.serve("/nucc.csv", write_nucc(tmp_path / "nucc.csv").read_bytes())
    source = await add_source(app, "nucc", "nucc", publisher.url("/nucc.csv"))
    lease = timedelta(seconds=settings.worker_lease_seconds)
    # A run that claimed the source and was killed: its lease is never renewed nor let go.
    assert await runner.claim(app.state.database, source_id=source.id, owner="killed", now=clock.now(), lease=lease)
    with pytest.raises(runner.SourceBusy):
        await run_source(app, settings, "nucc")
    assert await runner.run_due(app.state.database, settings, owner="w", box=load_box(settings), clock=clock) == 0
    later(clock, seconds=settings.worker_lease_seconds + 1)
    assert (await run_source(app, settings, "nucc")).status == "ok"


async def test_the_worker_loop_runs_a_due_source(
    app: FastAPI, settings: Settings, publisher: Publisher, clock: FixedClock, tmp_path: Path
) -> None:
    publisher.serve("/nucc.csv", write_nucc(tmp_path / "nucc.csv").read_bytes())
    worker = Worker(app.state.database, settings, clock=clock, enrichment=(app.state.enrichment, app.state.secrets))
    running = asyncio.create_task(worker.run())
    try:
        await add_source(app, "nucc", "nucc", publisher.url("/nucc.csv"), every="1h")
        for _ in range(100):
            source = await source_row(app, "nucc")
            if source.last_run is not None:
                break
            await asyncio.sleep(0.1)
        assert source.last_run is not None and source.last_run["status"] == "ok", source.last_run
        assert source.next_run_at == clock.now() + timedelta(hours=1)
        assert len(publisher.requests_for("/nucc.csv")) == 1  # not run again before it is due
    finally:
        worker.stop()
        await running


async def test_a_publisher_down_longer_than_a_run_waits(
    app: FastAPI, settings: Settings, publisher: Publisher, clock: FixedClock, tmp_path: Path
) -> None:
    publisher.serve("/cslb.csv", write_cslb(tmp_path / "cslb.csv", [LICENCE]).read_bytes())
    publisher.down["/cslb.csv"] = 503
    await add_source(app, "cslb", "cslb", publisher.url("/cslb.csv"), every="1d")
    report = await run_source(app, settings, "cslb")
    assert report.status == "failed" and report.error is not None and report.error["code"] == "server_error"
    assert report.requests > 1  # retried within the run, then gave up
    source = await source_row(app, "cslb")
    view = source_service.view(source, clock.now())
    assert (view["state"], view["last_error"], view["consecutive_failures"]) == ("failing", report.error["message"], 1)
    assert source.next_run_at == clock.now() + runner.FIRST_RETRY
    box = load_box(settings)
    # Not due before then: the worker does not ask again in a tight loop.
    assert await runner.run_due(app.state.database, settings, owner="w", box=box, clock=clock) == 0
    later(clock, minutes=5)
    assert await runner.run_due(app.state.database, settings, owner="w", box=box, clock=clock) == 1
    source = await source_row(app, "cslb")
    assert source.consecutive_failures == 2 and source.next_run_at == clock.now() + 2 * runner.FIRST_RETRY
    # The publisher is back: the next run succeeds and the source is active again.
    del publisher.down["/cslb.csv"]
    later(clock, minutes=10)
    assert await runner.run_due(app.state.database, settings, owner="w", box=box, clock=clock) == 1
    source = await source_row(app, "cslb")
    assert (source_service.state_of(source), source.runs_failed, source.runs_ok) == ("active", 2, 1)
    assert source.next_run_at == clock.now() + timedelta(days=1)
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(select(func.count()).select_from(Contact)) == 1


async def test_a_429_is_waited_out(app: FastAPI, settings: Settings, publisher: Publisher, tmp_path: Path) -> None:
    publisher.serve("/cslb.csv", write_cslb(tmp_path / "cslb.csv", [LICENCE]).read_bytes())
    publisher.fail_next("/cslb.csv", Fault(status=429, headers={"Retry-After": "1"}))
    await add_source(app, "cslb", "cslb", publisher.url("/cslb.csv"))
    report = await run_source(app, settings, "cslb")
    assert (report.status, report.created, report.requests) == ("ok", 1, 2)
    waited = publisher.requests_for("/cslb.csv")
    assert [s.status for s in waited] == [429, 200]


async def test_a_429_asking_too_long_fails_the_run_for_the_next_one(
    app: FastAPI, settings: Settings, publisher: Publisher, tmp_path: Path
) -> None:
    publisher.serve("/cslb.csv", write_cslb(tmp_path / "cslb.csv", [LICENCE]).read_bytes())
    publisher.fail_next("/cslb.csv", Fault(status=429, headers={"Retry-After": str(int(QUICK.retry_after_cap) + 60)}))
    await add_source(app, "cslb", "cslb", publisher.url("/cslb.csv"))
    report = await run_source(app, settings, "cslb")
    assert report.status == "failed" and report.error is not None and report.error["code"] == "rate_limited"
    assert (await run_source(app, settings, "cslb")).status == "ok"


async def test_a_permit_export_is_read_again_when_it_changes(
    app: FastAPI, settings: Settings, publisher: Publisher, clock: FixedClock
) -> None:
    publisher.serve("/permits.csv", export(*PERMITS), etag='"1"')
    await add_source(
        app, "ogden", "permits-csv", publisher.url("/permits.csv"), mapping=MAPPING, mapping_name="ogden", every="1h"
    )
    first = await run_source(app, settings, "ogden")
    assert (first.status, first.rows_read, first.ingested, first.created) == ("ok", 2, 2, 2), first.error
    unchanged = await run_source(app, settings, "ogden")
    assert (unchanged.status, unchanged.requests, unchanged.ingested) == ("not_modified", 1, 0)
    publisher.serve(
        "/permits.csv",
        export(*PERMITS, "P-3,11/20/2026,ROOFING,Reroof,12000,3 Elm St,Summit Roofing LLC,Ogden,UT"),
        etag='"2"',
    )
    later(clock, hours=1)
    second = await run_source(app, settings, "ogden")
    assert (second.status, second.rows_read, second.ingested, second.duplicates) == ("ok", 3, 1, 2)
    source = await source_row(app, "ogden")
    assert source.newest_record_at is not None and source.newest_record_at.date().isoformat() == "2026-11-20"
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(select(func.count()).select_from(Signal)) == 3


async def test_a_permit_export_missing_a_mapped_column_is_refused_before_any_write(
    app: FastAPI, settings: Settings, publisher: Publisher
) -> None:
    renamed = export(*PERMITS).replace(b"Contractor City", b"City", 1)
    publisher.serve("/permits.csv", renamed)
    await add_source(app, "ogden", "permits-csv", publisher.url("/permits.csv"), mapping=MAPPING, mapping_name="ogden")
    report = await run_source(app, settings, "ogden")
    assert report.status == "failed" and report.error is not None
    assert report.error["code"] == "unexpected_layout" and "'Contractor City'" in report.error["message"]
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(select(func.count()).select_from(Signal)) == 0
    assert source_service.state_of(await source_row(app, "ogden")) == "failing"


async def test_a_stale_source_is_warned_of_once_and_flagged(
    app: FastAPI, settings: Settings, publisher: Publisher, clock: FixedClock, tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    publisher.serve("/nucc.csv", write_nucc(tmp_path / "nucc.csv").read_bytes())
    await add_source(app, "nucc", "nucc", publisher.url("/nucc.csv"), every="1h")
    assert (await run_source(app, settings, "nucc")).status == "ok"
    later(clock, hours=2)
    assert not source_service.is_stale(await source_row(app, "nucc"), clock.now())
    later(clock, minutes=1)
    with caplog.at_level(logging.WARNING, logger="vpx.sources"):
        assert await runner.warn_stale(app.state.database, now=clock.now()) == ["nucc"]
        assert await runner.warn_stale(app.state.database, now=clock.now()) == []  # once
    assert [r.message for r in caplog.records if "stale" in r.message] == [
        "source nucc is stale: its last success is older than twice its interval (1h)"
    ]
    view = source_service.view(await source_row(app, "nucc"), clock.now())
    assert view["stale"] is True and view["age_seconds"] == 2 * 3600 + 60


async def test_the_real_cslb_and_chicago_samples(app: FastAPI, settings: Settings, publisher: Publisher) -> None:
    from importlib import resources

    from tests.conftest import SHARED_DATA

    cslb = SHARED_DATA / "licenses" / "ca_cslb_MasterLicenseData_noheader.csv"
    chicago = SHARED_DATA / "permits" / "chicago_building_permits_cranes_2016.csv"
    if not (cslb.is_file() and chicago.is_file()):
        pytest.skip(f"the shared CSLB and Chicago permit samples are not under {SHARED_DATA}")
    publisher.serve("/cslb", cslb.read_bytes(), etag=None, last_modified=None)  # as CSLB's handler serves it
    await add_source(app, "cslb", "cslb", publisher.url("/cslb"))
    report = await run_source(app, settings, "cslb")
    assert (report.status, report.rows_read, report.created) == ("ok", 123, 123), report.error  # as `vpx import`
    assert (await run_source(app, settings, "cslb")).status == "not_modified"  # the same bytes again

    mapping = resources.files("vpx.signals.sources.cities").joinpath("chicago.toml").read_text()
    publisher.serve("/permits.csv", chicago.read_bytes())
    await add_source(
        app, "chicago", "permits-csv", publisher.url("/permits.csv"), mapping=mapping, mapping_name="chicago"
    )
    permits = await run_source(app, settings, "chicago")
    assert permits.status == "ok" and permits.rows_read == 441 and permits.ingested > 100, permits.error
