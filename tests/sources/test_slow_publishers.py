"""Publishers that hold a run: one that trickles a byte at a time (a read timeout never fires, as
each byte restarts it) is given up after ``stall_timeout``, and the next run goes on from the last byte
received; a run past its ``max_run_time`` is stopped with that reason; a trickling source does not
hold back another that is due; and a file with a giant field is refused while the event loop keeps
answering."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from tests.registries.formats import write_cslb, write_nucc
from tests.sources.conftest import QUICK, add_source, later, run_source, source_row
from tests.sources.publisher import Fault, Publisher
from tests.sources.test_runs import LICENCE, MAPPING, PERMITS, export
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.secrets import load_box
from vpx.sources import runner
from vpx.sources.fetch import Fetcher, SourceFailed
from vpx.sources.limits import MB, Limits

# Every test here would hang without the limits it checks: bounded so that it fails instead.
PATIENCE = 60.0


@pytest.fixture
async def impatient_fetcher() -> AsyncIterator[Fetcher]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield Fetcher(client, policy=QUICK, limits=Limits(stall_timeout=1))


async def test_a_trickling_download_is_given_up_and_kept_to_go_on(
    publisher: Publisher, impatient_fetcher: Fetcher, tmp_path: Path
) -> None:
    body = os.urandom(5000)
    publisher.serve("/f.zip", body, etag='"f"')
    publisher.fail_next("/f.zip", Fault(trickle=0.1))  # a byte every 0.1 s: 500 s for the file
    async with asyncio.timeout(PATIENCE):
        with pytest.raises(SourceFailed) as stalled:
            await impatient_fetcher.download(publisher.url("/f.zip"), tmp_path / "f.zip")
    assert stalled.value.code == "stalled"
    held = (tmp_path / "f.zip.part").stat().st_size
    assert 0 < held < 100
    assert str(stalled.value) == (
        f"{publisher.url('/f.zip')} stalled: less than 64 KB came in 1s, this source's stall_timeout; the next run "
        f"goes on from byte {held}"
    )
    got = await impatient_fetcher.download(publisher.url("/f.zip"), tmp_path / "f.zip")
    assert got.path is not None and got.path.read_bytes() == body
    assert publisher.requests_for("/f.zip")[-1].headers["range"] == f"bytes={held}-"


async def test_a_trickling_page_is_given_up(publisher: Publisher, impatient_fetcher: Fetcher) -> None:
    publisher.serve("/page.html", b"<a href='x.zip'>x</a>" * 100)
    publisher.fail_next("/page.html", Fault(trickle=0.1))
    async with asyncio.timeout(PATIENCE):
        with pytest.raises(SourceFailed) as stalled:
            await impatient_fetcher.get(publisher.url("/page.html"))
    assert stalled.value.code == "stalled" and str(stalled.value).endswith("; the next run tries again")


async def test_a_run_past_its_max_run_time_is_stopped_with_that_reason(
    app: FastAPI, settings: Settings, publisher: Publisher, tmp_path: Path
) -> None:
    publisher.serve("/cslb.csv", write_cslb(tmp_path / "cslb.csv", [LICENCE]).read_bytes())
    publisher.fail_next("/cslb.csv", Fault(trickle=0.2))
    await add_source(app, "cslb", "cslb", publisher.url("/cslb.csv"), options={"max_run_time": "2s"})
    async with asyncio.timeout(PATIENCE):
        report = await run_source(app, settings, "cslb")
    assert report.status == "failed" and report.error == {
        "code": "run_timeout",
        "message": "the run was stopped after 2s, the longest this source's runs may take (max_run_time); what it "
        "saved stays and the next run goes on from there",
    }
    source = await source_row(app, "cslb")
    assert source.lease_owner is None and source.last_error == report.error["message"]
    again = await run_source(app, settings, "cslb")  # the publisher answers at once now
    assert (again.status, again.created) == ("ok", 1), again.error


async def test_a_trickling_publisher_does_not_hold_back_another_due_source(
    app: FastAPI, settings: Settings, publisher: Publisher, clock: FixedClock, tmp_path: Path
) -> None:
    publisher.serve("/cslb.csv", write_cslb(tmp_path / "cslb.csv", [LICENCE]).read_bytes())
    publisher.fail_next("/cslb.csv", Fault(trickle=0.3))  # a byte every 0.3 s: minutes for the file
    publisher.serve("/nucc.csv", write_nucc(tmp_path / "nucc.csv").read_bytes())
    await add_source(app, "slow", "cslb", publisher.url("/cslb.csv"))
    later(clock, seconds=1)
    await add_source(app, "nucc", "nucc", publisher.url("/nucc.csv"))  # due after the slow one
    box = load_box(settings)
    async with asyncio.timeout(PATIENCE):
        lane = asyncio.create_task(runner.worker_round(app.state.database, settings, owner="w", box=box, clock=clock))
        while (await source_row(app, "nucc")).last_run is None:
            assert not lane.done(), lane
            await asyncio.sleep(0.05)
        nucc, slow = await source_row(app, "nucc"), await source_row(app, "slow")
        assert nucc.last_run is not None and nucc.last_run["status"] == "ok", nucc.last_run
        assert slow.last_run is None and slow.lease_owner == "w"  # still trickling
        lane.cancel()  # the worker stopping: the run it holds is cut short and says so
        with contextlib.suppress(asyncio.CancelledError):
            await lane
    slow = await source_row(app, "slow")
    assert slow.last_run is not None and slow.last_run["error"]["code"] == "interrupted"
    assert slow.lease_owner is None


async def test_a_giant_field_is_refused_while_the_event_loop_keeps_answering(
    app: FastAPI, settings: Settings, publisher: Publisher
) -> None:
    hostile = export(*PERMITS).replace(b"Tear off and reroof", b"Tear off " + b"and reroof " * (15 * MB), 1)
    publisher.serve("/permits.csv", hostile)  # one line of 150 MB
    await add_source(app, "ogden", "permits-csv", publisher.url("/permits.csv"), mapping=MAPPING, mapping_name="ogden")
    loop = asyncio.get_running_loop()
    worst = 0.0
    running = asyncio.create_task(run_source(app, settings, "ogden"))
    async with asyncio.timeout(PATIENCE):
        while not running.done():
            before = loop.time()
            await asyncio.sleep(0.01)
            worst = max(worst, loop.time() - before - 0.01)
        report = await running
    assert report.status == "failed" and report.error is not None
    assert report.error["code"] == "line_too_long" and "line 2 is longer than 1 MB" in report.error["message"]
    # Reading that line took the event loop for seconds; measured against it, a generous bound.
    assert worst < 1.0, f"the event loop was held {worst:.2f} s"
