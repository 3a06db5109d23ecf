"""End to end with real processes: a real `vpx worker` sends two unrelated accounts' sequence emails to a
real SMTP server on loopback that answers 550 5.1.1, records the hard bounces, applies the refund rules
(the second bounce corroborates the first: each account refunded exactly once, the email marked
bounced for every account, the open report of one of them confirmed) and delivers contact.corrected
to every buyer's real HTTP receiver, signed."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from standardwebhooks.webhooks import Webhook

from tests.conftest import TEST_SECRET_KEY
from tests.factories import Factory
from tests.faults.support import wait_until
from tests.quality.support import balance, corrected, ledger_total, refunds, report, reveal
from tests.sequences.smtp_server import SmtpSink
from tests.sequences.test_sequences import STEPS, enroll, mailbox, sequence
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import payload
from vpx.clock import FixedClock

pytestmark = pytest.mark.asyncio
EMAIL = "owner@acme.example"


def start_worker(database_url: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "VPX_DATABASE_URL": database_url,
        "VPX_SECRET_KEYS": TEST_SECRET_KEY,
        "VPX_WEBHOOK_ALLOW_PRIVATE": "1",
        "VPX_MAILBOX_ALLOW_PRIVATE": "1",
        "VPX_WORKER_LEASE_SECONDS": "5",
        "VPX_WORKER_POLL_SECONDS": "0.1",
        "VPX_WEBHOOK_RETRY_SCHEDULE": "0.2,0.2,0.2",
        "VPX_MX_LOOKUPS_PER_SECOND": "0",
        "VPX_LOG_LEVEL": "WARNING",
    }
    command = [str(Path(sys.executable).parent / "vpx"), "worker", "--json"]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


async def test_a_bounce_seen_by_a_real_worker_refunds_once_and_reaches_every_buyer(
    app: FastAPI,
    client: httpx.AsyncClient,
    factory: Factory,
    receiver: Receiver,
    smtp_sink: SmtpSink,
    clock: FixedClock,
    database_url: str,
) -> None:
    clock.set(datetime.now(UTC))  # the worker runs on the real clock
    secrets = {}
    accounts = {}
    for name in ("sender", "reporter"):
        accounts[name] = account = await factory.account(credits=10, name=name)
        subscribed = await client.post(
            "/api/v1/webhooks",
            json={"url": receiver.url(f"/{name}"), "events": ["contact.corrected"]},
            headers=account.headers("full"),
        )
        secrets[name] = subscribed.json()["secret"]
    sender, reporter = accounts["sender"], accounts["reporter"]
    contact = await factory.contact(email=EMAIL)
    for account in (sender, reporter):
        await reveal(client, account, contact)
    assert (await report(client, reporter, contact, "email", "wrong"))["status"] == "open"
    smtp_sink.refuse(EMAIL, 550, "5.1.1 User unknown")
    for account in (sender, reporter):  # one account's bounce alone is not believed for everyone
        created = await sequence(client, account, await mailbox(client, account, smtp_sink), steps=STEPS[:1])
        await enroll(client, account, created["id"], [contact])

    worker = start_worker(database_url)
    try:
        await receiver.wait_for(2, limit=60)

        async def reporter_refunded() -> bool:
            return len(await refunds(client, reporter)) > 0

        assert await wait_until(reporter_refunded, limit=30)
        await asyncio.sleep(0.5)  # and nothing more arrives
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=30)
    assert worker.returncode == 0, worker.stderr.read() if worker.stderr else None

    assert "RCPT" in smtp_sink.commands and smtp_sink.received == []
    for name in ("sender", "reporter"):
        [request] = receiver.received(f"/{name}")
        Webhook(secrets[name]).verify(request.body, request.headers)
        [event] = corrected(receiver, f"/{name}")
        assert (event["data"]["fields"], event["data"]["reason"]) == (["email"], "bounced")
        assert payload(request.body)["data"]["contact_id"] == contact
    for account in (sender, reporter):
        assert [e["amount"] for e in await refunds(client, account)] == [0.25]
        assert await ledger_total(app, account.id) == await balance(client, account)
        shown = (await client.get(f"/api/v1/contacts/{contact}", headers=account.headers())).json()
        assert shown["email_status"] == "bounced"
    assert (await report(client, reporter, contact, "email", "wrong"))["status"] == "confirmed"
