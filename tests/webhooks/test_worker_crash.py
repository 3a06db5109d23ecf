"""D26 at least once: the real `vpx worker` killed with SIGKILL in the middle of deliveries, then
restarted; every event arrives, and the repeats carry the webhook-id (and body) of the first."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi import FastAPI

from tests.conftest import TEST_SECRET_KEY
from tests.factories import Factory
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliveries
from vpx.clock import FixedClock
from vpx.webhooks import service as webhook_service

pytestmark = pytest.mark.asyncio

EVENTS = 20


def start_worker(database_url: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "VPX_DATABASE_URL": database_url,
        "VPX_SECRET_KEYS": TEST_SECRET_KEY,
        "VPX_WEBHOOK_ALLOW_PRIVATE": "1",
        "VPX_WORKER_LEASE_SECONDS": "1",
        "VPX_WORKER_POLL_SECONDS": "0.1",
        "VPX_WORKER_BATCH_SIZE": "5",
        "VPX_WEBHOOK_RETRY_SCHEDULE": "0.2,0.2,0.2",
        "VPX_LOG_LEVEL": "WARNING",
    }
    command = [str(Path(sys.executable).parent / "vpx"), "worker", "--in-flight", "10", "--json"]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


async def wait_until(condition, limit: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if await condition():
            return True
        await asyncio.sleep(0.05)
    return False


async def test_sigkill_mid_delivery_then_restart_delivers_everything(
    app: FastAPI, factory: Factory, receiver: Receiver, clock: FixedClock, database_url: str
) -> None:
    clock.set(datetime.now(UTC))  # the worker process runs on the real clock
    receiver.default_delay = 0.3  # every answer takes a while: the kill lands with requests in flight
    account = await factory.account()
    async with app.state.database.write_sessions() as session, session.begin():
        await webhook_service.create_endpoint(
            session,
            account_id=account.id,
            url=receiver.url(),
            event_types=["signal.created"],
            signal_filter=None,
            description="",
            now=clock.now(),
            settings=app.state.settings,
            resolver=app.state.webhook_resolver,
            box=app.state.secrets,
        )
        for n in range(EVENTS):
            await webhook_service.enqueue_event(
                session, account_id=account.id, event_type="signal.created", data={"id": f"sg_{n}"}, now=clock.now()
            )

    first = start_worker(database_url)
    try:
        assert await wait_until(lambda: _arrived(receiver, 8), limit=30), first.stderr
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    assert first.returncode == -signal.SIGKILL
    before_restart = {d.event_id: d.status for d in await deliveries(app)}
    assert list(before_restart.values()).count("succeeded") < EVENTS

    second = start_worker(database_url)
    try:

        async def all_delivered() -> bool:
            return all(d.status == "succeeded" for d in await deliveries(app))

        assert await wait_until(all_delivered, limit=60)
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=20)
    assert second.returncode == 0, second.stderr.read() if second.stderr else None

    by_id: dict[str, set[bytes]] = defaultdict(set)
    counts: dict[str, int] = defaultdict(int)
    for request in receiver.received():
        by_id[request.headers["webhook-id"]].add(request.body)
        counts[request.headers["webhook-id"]] += 1
    event_ids = {d.event_id for d in await deliveries(app)}
    assert set(by_id) == event_ids and len(event_ids) == EVENTS
    assert all(len(bodies) == 1 for bodies in by_id.values())  # a repeat is the same message
    assert sum(counts.values()) > EVENTS  # the deliveries in flight at the kill were sent again


async def _arrived(receiver: Receiver, count: int) -> bool:
    return len(receiver.received()) >= count
