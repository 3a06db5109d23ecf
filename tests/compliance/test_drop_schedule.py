"""The DROP cycle's clock with a fake clock: the worker's lane downloads when a pull is due (at once the
first time, then every VPX_DROP_PULL_DAYS), answers a batch after the operator's hold, warns from the
40th day of an open batch (once a day), and shows the deadline in `vpx status --json`'s overview and in
/metrics. The API key is kept sealed: never in clear in its column."""

from __future__ import annotations

import logging
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.compliance.fake_drop import API_KEY, FakeDrop
from tests.compliance.support import drop_status
from tests.conftest import START, test_settings, wipe
from vpx.app import create_app
from vpx.clock import FixedClock
from vpx.compliance.drop import cycle
from vpx.compliance.drop.schedule import DropSchedule
from vpx.compliance.hashing import email_hash
from vpx.compliance.overview import overview
from vpx.config import Settings
from vpx.models import DropState

pytestmark = pytest.mark.asyncio


def _schedule(app: FastAPI, settings: Settings) -> DropSchedule:
    return DropSchedule(app.state.database, settings, app.state.secrets)


async def test_the_worker_pulls_when_due_holds_for_exemptions_and_warns_from_day_40(
    app: FastAPI, client: httpx.AsyncClient, drop: FakeDrop, clock: FixedClock, caplog: pytest.LogCaptureFixture
) -> None:
    settings = app.state.settings.model_copy(update={"drop_hold_days": 41})
    lane = _schedule(app, settings)
    start = clock.now()
    drop.offer({"Email": [("ClockItem001", email_hash("someone@far.example"))]})
    await lane.round(start)  # never pulled: due at once
    found = await drop_status(app)
    assert found["last_pull_at"] == start and found["open_batch"]["items"] == 1
    assert found["open_batch"]["deadline"] == start + timedelta(days=45)
    assert found["next_pull_due"] == start + timedelta(days=30)

    # The key given in the environment is kept sealed, never in clear.
    async with app.state.database.read_sessions() as session:
        sealed = await session.scalar(select(DropState.api_key_sealed))
    assert sealed and API_KEY not in sealed and app.state.secrets.open(sealed) == API_KEY

    with caplog.at_level(logging.WARNING, logger="vpx.compliance"):
        await lane.round(start + timedelta(days=39, hours=23))
        assert not [r for r in caplog.records if "deadline" in r.getMessage()]
        day40 = start + timedelta(days=40)
        await lane.round(day40)
        warned = [r.getMessage() for r in caplog.records if "deadline" in r.getMessage()]
        # The batch's deadline, and DROP's own (no download is possible while the batch is open).
        assert len(warned) == 2 and all(f"{start + timedelta(days=45):%Y-%m-%d}" in w for w in warned)
        await lane.round(day40 + timedelta(hours=2))  # once a day, across processes
        assert len([r for r in caplog.records if "deadline" in r.getMessage()]) == 2
    app.state.clock.set(day40)
    assert len((await drop_status(app))["warnings"]) == 2
    async with app.state.database.read_sessions() as session:
        seen = await overview(session, settings, now=day40)
    assert seen["drop"]["next_deadline"] == start + timedelta(days=45)
    assert seen["drop"]["open_batch"]["days_left"] == 5.0
    metrics = (await client.get("/metrics")).text
    assert "vpx_drop_batch_deadline_seconds 432000.0" in metrics
    assert "vpx_drop_batch_undecided_items 1.0" in metrics

    # The hold is over on day 41: the worker answers, and the batch is closed.
    await lane.round(start + timedelta(days=41))
    assert drop.answers == {"ClockItem001": "5"}
    assert (await drop_status(app))["open_batch"] is None
    # The next pull was due on day 30: the worker's next look downloads ("no new data" this time).
    calls = len(drop.calls)
    day41 = start + timedelta(days=41, minutes=1)
    await lane.round(day41)
    assert len(drop.calls) == calls + 1
    app.state.clock.set(day41)
    after = await drop_status(app)
    assert after["last_pull_at"] == day41 and after["warnings"] == []
    assert after["next_pull_due"] == day41 + timedelta(days=30)
    await lane.round(day41 + timedelta(days=29, hours=23))  # not due yet
    assert len(drop.calls) == calls + 1


async def test_without_a_key_nothing_runs_and_the_status_says_why(database_url: str, drop: FakeDrop) -> None:
    settings = test_settings(database_url, drop_url=drop.base_url)
    app = create_app(settings, clock=FixedClock(START))
    await wipe(app.state.database)
    try:
        with pytest.raises(cycle.DropCycleError) as missing:
            async with cycle.drop_client(app.state.database, settings, app.state.secrets):
                pass
        assert missing.value.code == "not_configured" and "VPX_DROP_API_KEY" in str(missing.value)
        await _schedule(app, settings).round(app.state.clock.now())  # logs, never raises
        assert drop.calls == []
    finally:
        await app.state.database.dispose()
