"""The signal stream with a test key: the sandbox's signals as the sandbox's feed adds them, never live
mode's; a live key's stream never carries the sandbox's."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from httpx_sse import aconnect_sse

from tests.factories import Factory
from tests.sandbox.conftest import sandbox_settings, test_keys
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.demo.feed import DemoFeed


@pytest.fixture
def settings(database_url: str, sandbox_url: str) -> Settings:
    return sandbox_settings(database_url, sandbox_url, stream_poll_seconds=0.1, stream_keepalive_seconds=1)


async def _signals(url: str, key: str, into: list[str], opened: asyncio.Event) -> None:
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(30, read=None)) as http,
        aconnect_sse(http, "GET", f"{url}/api/v1/signals/stream", headers={"X-API-Key": key}) as source,
    ):
        assert source.response.status_code == 200, await source.response.aread()
        opened.set()
        async for sse in source.aiter_sse():
            if sse.event == "signal":
                into.append(json.loads(sse.data)["id"])


async def test_each_modes_stream_carries_its_own_signals(
    app: FastAPI, served: str, client: httpx.AsyncClient, factory: Factory, clock: FixedClock
) -> None:
    account = await factory.account()
    keys = await test_keys(client, account)
    test_seen: list[str] = []
    live_seen: list[str] = []
    opened = [asyncio.Event(), asyncio.Event()]
    readers = [
        asyncio.create_task(_signals(served, keys["full"], test_seen, opened[0])),
        asyncio.create_task(_signals(served, account.keys["full"], live_seen, opened[1])),
    ]
    try:
        await asyncio.wait_for(asyncio.gather(*(o.wait() for o in opened)), timeout=15)
        clock.set(clock.now() + timedelta(seconds=13))  # a slot of the feed no other test fed
        sandbox = app.state.sandbox
        report = await DemoFeed(sandbox.database, sandbox.settings, clock=clock, interval_seconds=1).feed_once()
        assert report.ingested >= 1
        for _ in range(150):
            if set(report.signal_ids) <= set(test_seen):
                break
            await asyncio.sleep(0.1)
        assert set(report.signal_ids) <= set(test_seen)
        await asyncio.sleep(0.5)  # polls of the live stream's broker that would carry them, if it did
        assert not set(report.signal_ids) & set(live_seen)
    finally:
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
