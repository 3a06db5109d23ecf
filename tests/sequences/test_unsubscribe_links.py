"""CAN-SPAM's opt-out in sequences: the link of an email keeps working at least 30 days even after
its sequence is deleted (kept 31 days, then purged by the worker), an unsubscribe stops every later
send at once, and the address is off sale for every account (VPX_UNSUBSCRIBE_SUPPRESSES=all)."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI

from tests.factories import Factory
from tests.sequences.smtp_server import SmtpSink
from tests.sequences.test_sequences import enroll, mailbox, revealed, run, sequence

# The sequences' fixtures: their settings and Monday 9:00 UTC (inside the send window).
from tests.sequences.test_sequences import monday as monday
from tests.sequences.test_sequences import settings as settings
from vpx.clock import FixedClock
from vpx.sequences import links

pytestmark = pytest.mark.asyncio
ONE_CLICK = {"Content-Type": "application/x-www-form-urlencoded"}


async def test_a_deleted_sequences_link_works_31_days_and_the_address_is_off_sale_for_all(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink, clock: FixedClock
) -> None:
    account = await factory.account(credits=10)
    other = await factory.account(credits=10)
    mailbox_id = await mailbox(client, account, smtp_sink)
    first = await sequence(client, account, mailbox_id)
    [contact] = await revealed(client, factory, account)
    await enroll(client, account, first["id"], [contact])
    assert await run(app) == 1
    sent = smtp_sink.received[0].message()
    assert "Seller Inc, 1 Main St, Denver CO 80202" in sent.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    assert sent["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    path = httpx.URL(sent["List-Unsubscribe"].strip("<>")).path

    deleted = await client.delete(f"/api/v1/sequences/{first['id']}", headers=account.headers("full"))
    assert deleted.status_code == 204
    clock.set(clock.now() + timedelta(days=30))
    done = await client.post(path, content="List-Unsubscribe=One-Click", headers=ONE_CLICK)
    assert done.status_code == 200
    # Off sale for every account, and no sequence of the sender's takes it again.
    assert (await client.post(f"/api/v1/contacts/{contact}/reveal", headers=other.headers())).status_code != 200
    second = await sequence(client, account, mailbox_id)
    assert (await enroll(client, account, second["id"], [contact]))[0]["status"] == "suppressed"

    clock.set(clock.now() + timedelta(days=1, seconds=1))
    async with app.state.database.write_sessions() as session, session.begin():
        assert await links.purge(session, now=clock.now()) == 1
    assert (await client.post(path, content="List-Unsubscribe=One-Click", headers=ONE_CLICK)).status_code == 404


async def test_an_unsubscribe_stops_the_next_step_at_once(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink, clock: FixedClock
) -> None:
    account = await factory.account(credits=10)
    mailbox_id = await mailbox(client, account, smtp_sink)
    created = await sequence(client, account, mailbox_id)
    [contact] = await revealed(client, factory, account)
    await enroll(client, account, created["id"], [contact])
    assert await run(app) == 1
    path = httpx.URL(smtp_sink.received[0].message()["List-Unsubscribe"].strip("<>")).path
    assert (await client.post(path, content="List-Unsubscribe=One-Click", headers=ONE_CLICK)).status_code == 200
    clock.set(clock.now() + timedelta(days=3))  # the second step's time
    assert await run(app) == 0
    assert len(smtp_sink.received) == 1
