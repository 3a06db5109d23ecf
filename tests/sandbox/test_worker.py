"""`vpx worker`'s test-mode work: a worker of its own on the sandbox database, which delivers test mode's
webhooks (``livemode: false``); with no sandbox made yet it waits for one, and stops when told."""

from __future__ import annotations

import asyncio

import httpx
from fastapi import FastAPI

from tests.factories import Factory
from tests.sandbox.conftest import test_keys
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import payload
from vpx.cli.worker import TestModeWork
from vpx.config import Settings


async def test_the_sandbox_worker_delivers_test_modes_webhooks(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver, settings: Settings
) -> None:
    account = await factory.account()
    keys = await test_keys(client, account)
    full = {"X-API-Key": keys["full"]}
    hook = await client.post(
        "/api/v1/webhooks", json={"url": receiver.url("/sandbox"), "events": ["contact.revealed"]}, headers=full
    )
    assert hook.status_code == 201, hook.text
    assert (await client.post(f"/api/v1/webhooks/{hook.json()['id']}/test", headers=full)).status_code in (200, 202)

    work = TestModeWork(settings, worker_id="test", max_in_flight=10)
    task = asyncio.create_task(work.run())
    try:
        received = await receiver.wait_for(1, path="/sandbox", limit=30)
    finally:
        work.stop()
        await asyncio.wait_for(task, timeout=30)
    assert received, "the sandbox's worker delivered nothing"
    event = payload(received[0].body)
    assert event["type"] == "webhook.test" and event["livemode"] is False


async def test_without_a_sandbox_it_waits_and_stops_when_told(settings: Settings) -> None:
    missing = settings.model_copy(update={"sandbox_database_url": "sqlite+aiosqlite:////nonexistent/vpx-sandbox.db"})
    work = TestModeWork(missing, worker_id="test", max_in_flight=10)
    task = asyncio.create_task(work.run())
    await asyncio.sleep(0)
    assert work.worker is None
    work.stop()
    await asyncio.wait_for(task, timeout=5)
    assert work.worker is None
    off = TestModeWork(settings.model_copy(update={"test_mode": False}), worker_id="test", max_in_flight=10)
    await asyncio.wait_for(off.run(), timeout=5)
    assert off.worker is None
