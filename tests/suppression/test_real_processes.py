"""End to end with real processes: the operator's `vpx suppress add` (a subprocess) puts a contact on the
list; a real `vpx worker` delivers `contact.suppressed` to the webhook of every account that revealed
it (a real HTTP receiver), with a valid signature and without the entry's note; the feed has it."""

from __future__ import annotations

import asyncio
import signal
from datetime import UTC, datetime

import httpx
import pytest
from fastapi import FastAPI
from standardwebhooks.webhooks import Webhook

from tests.factories import Factory
from tests.suppression.support import NOTE, feed, reveal, subscribe
from tests.test_cli import vpx
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import payload
from tests.webhooks.test_worker_crash import start_worker
from vpx.clock import FixedClock

pytestmark = pytest.mark.asyncio


async def test_the_operators_suppression_reaches_every_buyer_through_the_worker(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver, clock: FixedClock, database_url: str
) -> None:
    clock.set(datetime.now(UTC))  # the processes run on the real clock
    buyers = {}
    for name in ("first", "second", "bystander"):
        account = await factory.account(credits=100, name=name)
        buyers[name] = account, await subscribe(client, account, receiver, name)
    contact = await factory.contact()
    await reveal(client, buyers["first"][0], contact)
    await reveal(client, buyers["second"][0], contact)

    added = await asyncio.to_thread(
        vpx, database_url, "suppress", "add", "--contact", contact, "--reason", "opt_out", "--note", NOTE
    )
    assert added["created"] is True
    worker = start_worker(database_url)
    try:
        await receiver.wait_for(2, limit=30)
        await asyncio.sleep(0.3)  # and nothing more arrives
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=20)
    assert worker.returncode == 0, worker.stderr.read() if worker.stderr else None

    assert sorted(r.path for r in receiver.received()) == ["/first", "/second"]
    for request in receiver.received():
        _, secret = buyers[request.path.strip("/")]
        Webhook(secret).verify(request.body, request.headers)  # signed as every event (Standard Webhooks)
        event = payload(request.body)
        assert event["type"] == "contact.suppressed" and event["data"]["contact_id"] == contact
        assert event["data"]["reason"] == "opt_out" and set(event["data"]) == {"contact_id", "reason", "suppressed_at"}
        assert b"Jane" not in request.body
    for name in ("first", "second"):
        account, _ = buyers[name]
        assert [i["contact_id"] for i in (await feed(client, account))["suppressions"]] == [contact]
    assert (await feed(client, buyers["bystander"][0]))["suppressions"] == []
