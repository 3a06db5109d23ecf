"""A suppression reaches every past buyer: each account that revealed the contact gets one
`contact.suppressed` event at its webhook (a real HTTP receiver) and finds the contact in its feed;
accounts that never revealed it get neither; the entry's note never leaves the service; the
enrollments running for it stop at once in every account; and an unsubscribe does the same when the
operator makes unsubscribes apply to every account (VPX_UNSUBSCRIBE_SUPPRESSES=all)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.conftest import asgi_client, wipe
from tests.factories import Factory
from tests.sequences.smtp_server import SmtpSink
from tests.suppression.support import (
    NOTE,
    buyer,
    enroll,
    enrollment_states,
    events_at,
    feed,
    mailbox_and_sequence,
    reveal,
)
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliver_round, deliveries, webhook_settings
from vpx.app import create_app
from vpx.clock import FixedClock
from vpx.models import SequenceMessage
from vpx.sequences import sending
from vpx.suppression import service as suppression_service
from vpx.suppression.service import SuppressionKind, SuppressionReason

pytestmark = pytest.mark.asyncio


async def suppress(factory: Factory, kind: str, value: str, reason: str = "opt_out", note: str = NOTE) -> None:
    """An operator's entry (as `vpx suppress add`), with a note of free text."""
    async with factory.database.write_sessions() as session, session.begin():
        await suppression_service.add_suppression(
            session,
            kind=SuppressionKind(kind),
            value=value,
            reason=SuppressionReason(reason),
            note=note,
            now=factory.clock.now(),
        )


async def run_sends(app: FastAPI) -> int:
    return await sending.run_due_sends(
        app.state.database, box=app.state.secrets, settings=app.state.settings, clock=app.state.clock
    )


async def test_every_past_buyer_is_told_once_and_no_one_else(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, receiver: Receiver, clock: FixedClock
) -> None:
    first = await buyer(client, factory, receiver, "first")
    second = await buyer(client, factory, receiver, "second")
    bystander = await buyer(client, factory, receiver, "bystander")
    contact = await factory.contact()
    other = await factory.contact(business_name="Other Roofing", phone="+13035550199", email="x@other.example")
    for account in (first, second):
        await reveal(client, account, contact)
    await reveal(client, bystander, other)
    clock.set(clock.now() + timedelta(hours=1))
    suppressed_at = clock.now()

    await suppress(factory, "phone", "+1 303 555 0100", reason="do_not_contact")
    # The same contact again, by its email and its id: nobody is told twice.
    await suppress(factory, "email", "INFO@acmeplumbing.example")
    await suppress(factory, "contact", contact, reason="fcra")
    assert await deliver_round(app) == 2

    expected = {
        "contact_id": contact,
        "reason": "do_not_contact",
        "suppressed_at": suppressed_at.isoformat()[:19] + "Z",
    }
    for name in ("first", "second"):
        [event] = events_at(receiver, f"/{name}")
        assert event["type"] == "contact.suppressed"
        assert event["data"] == expected
    assert receiver.received("/bystander") == []
    for request in receiver.received():
        assert b"Jane" not in request.body and b"furious" not in request.body

    for account in (first, second):
        page = await feed(client, account)
        assert page["suppressions"] == [expected] and page["next_cursor"] is None and page["limit"] == 25
        assert "Jane" not in str(page)
    assert (await feed(client, bystander))["suppressions"] == []
    # Delivered through the outbox as every event: listed with the webhook's deliveries.
    assert {d.event_type for d in await deliveries(app)} == {"contact.suppressed"}


async def test_only_subscriptions_to_the_event_receive_it(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, receiver: Receiver
) -> None:
    listening = await buyer(client, factory, receiver, "listening")
    deaf = await buyer(client, factory, receiver, "deaf", events=["contact.revealed"])
    contact = await factory.contact()
    for account in (listening, deaf):
        await reveal(client, account, contact)
    await suppress(factory, "contact", contact)
    await deliver_round(app)
    assert [e["type"] for e in events_at(receiver, "/listening")] == ["contact.suppressed"]
    assert [e["type"] for e in events_at(receiver, "/deaf")] == ["contact.revealed"]
    # Not subscribed is not uninformed: the feed has it.
    assert [i["contact_id"] for i in (await feed(client, deaf))["suppressions"]] == [contact]


async def test_a_suppression_rolled_back_tells_no_one(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, receiver: Receiver
) -> None:
    account = await buyer(client, factory, receiver, "buyer")
    contact = await factory.contact()
    await reveal(client, account, contact)
    with pytest.raises(RuntimeError):
        async with factory.database.write_sessions() as session, session.begin():
            await suppression_service.add_suppression(
                session,
                kind=SuppressionKind.contact,
                value=contact,
                reason=SuppressionReason.opt_out,
                note="",
                now=factory.clock.now(),
            )
            raise RuntimeError("the operator's command failed after adding")
    assert await deliver_round(app) == 0
    assert (await feed(client, account))["suppressions"] == []


async def test_running_enrollments_stop_at_once_in_every_account(
    client: httpx.AsyncClient,
    factory: Factory,
    app: FastAPI,
    receiver: Receiver,
    smtp_sink: SmtpSink,
    clock: FixedClock,
) -> None:
    first = await buyer(client, factory, receiver, "first")
    second = await buyer(client, factory, receiver, "second")
    contact = await factory.contact(phone="+13035550100", email="owner@acme.example")
    spared = await factory.contact(business_name="Spared Dental", phone="+13035550177", email="dr@spared.example")
    sequences = {}
    for account in (first, second):
        for contact_id in (contact, spared):
            await reveal(client, account, contact_id)
        sequences[account.id] = await mailbox_and_sequence(client, account, smtp_sink)
        await enroll(client, account, sequences[account.id], [contact, spared])
    assert await run_sends(app) == 4  # the first step of each: the enrollments are now in flight
    smtp_sink.received.clear()

    await suppress(factory, "phone", "+13035550100")
    for account in (first, second):
        states = await enrollment_states(client, account, sequences[account.id])
        assert states[contact] == ("stopped", "suppressed")
        assert states[spared] == ("active", None)
    clock.set(clock.now() + timedelta(days=3))
    assert await run_sends(app) == 2  # the spared contact's second steps only
    assert sorted(r.recipients[0] for r in smtp_sink.received) == ["dr@spared.example", "dr@spared.example"]


async def test_a_message_waiting_for_a_retry_is_dropped_with_its_enrollment(
    client: httpx.AsyncClient,
    factory: Factory,
    app: FastAPI,
    receiver: Receiver,
    smtp_sink: SmtpSink,
    clock: FixedClock,
) -> None:
    account = await buyer(client, factory, receiver, "buyer")
    contact = await factory.contact(email="owner@acme.example")
    await reveal(client, account, contact)
    sequence_id = await mailbox_and_sequence(client, account, smtp_sink)
    await enroll(client, account, sequence_id, [contact])
    smtp_sink.tempfail_next()
    assert await run_sends(app) == 1
    async with app.state.database.read_sessions() as session:
        assert list(await session.scalars(select(SequenceMessage.status))) == ["deferred"]
    await suppress(factory, "email", "owner@acme.example")
    async with app.state.database.read_sessions() as session:
        assert list(await session.scalars(select(SequenceMessage.status))) == ["stopped"]
    clock.set(clock.now() + timedelta(days=1))
    assert await run_sends(app) == 0 and smtp_sink.received == []


@pytest.fixture
async def app_per_account(database_url: str, clock: FixedClock) -> AsyncIterator[FastAPI]:
    """An app whose unsubscribes apply to the sending account only (VPX_UNSUBSCRIBE_SUPPRESSES=account)."""
    application = create_app(
        webhook_settings(database_url, mailbox_allow_private=True, unsubscribe_suppresses="account"), clock=clock
    )
    await wipe(application.state.database)
    yield application
    await application.state.database.dispose()


async def _unsubscribe(client: httpx.AsyncClient, sink: SmtpSink, sender: str) -> None:
    """The one-click unsubscribe of the email ``sender`` sent."""
    message = next(r for r in sink.received if r.sender == sender).message()
    path = httpx.URL(message["List-Unsubscribe"].strip("<>")).path
    done = await client.post(
        path, content="List-Unsubscribe=One-Click", headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert done.status_code == 200, done.text


async def _two_buyers_enrolled(
    client: httpx.AsyncClient, factory: Factory, receiver: Receiver, sink: SmtpSink, app: FastAPI
) -> tuple[Any, Any, dict[str, str], str]:
    first = await buyer(client, factory, receiver, "first")
    second = await buyer(client, factory, receiver, "second")
    contact = await factory.contact(email="owner@acme.example")
    sequences = {}
    for name, account in (("first", first), ("second", second)):
        await reveal(client, account, contact)
        sequences[account.id] = await mailbox_and_sequence(client, account, sink, sender=f"{name}@seller.example")
        await enroll(client, account, sequences[account.id], [contact])
    assert await run_sends(app) == 2
    return first, second, sequences, contact


async def test_an_unsubscribe_stays_with_its_account_when_the_operator_says_so(
    app_per_account: FastAPI, receiver: Receiver, smtp_sink: SmtpSink, clock: FixedClock
) -> None:
    app = app_per_account
    factory = Factory(app, clock)
    async with asgi_client(app) as client:
        first, second, sequences, contact = await _two_buyers_enrolled(client, factory, receiver, smtp_sink, app)
        await _unsubscribe(client, smtp_sink, "first@seller.example")
        first_states = await enrollment_states(client, first, sequences[first.id])
        assert first_states[contact] == ("unsubscribed", "unsubscribed")
        assert (await enrollment_states(client, second, sequences[second.id]))[contact] == ("active", None)
        assert await deliver_round(app) == 0
        assert (await feed(client, second))["suppressions"] == []


async def test_an_unsubscribe_reaches_every_buyer_by_default(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver, smtp_sink: SmtpSink
) -> None:
    # CAN-SPAM: an address that opted out is never sold again (VPX_UNSUBSCRIBE_SUPPRESSES=all by default).
    assert app.state.settings.unsubscribe_suppresses == "all"
    first, second, sequences, contact = await _two_buyers_enrolled(client, factory, receiver, smtp_sink, app)
    await _unsubscribe(client, smtp_sink, "first@seller.example")
    first_states = await enrollment_states(client, first, sequences[first.id])
    assert first_states[contact] == ("unsubscribed", "unsubscribed")
    assert (await enrollment_states(client, second, sequences[second.id]))[contact] == ("stopped", "suppressed")
    assert await deliver_round(app) == 2
    for name, account in (("first", first), ("second", second)):
        [event] = events_at(receiver, f"/{name}")
        assert event["data"]["contact_id"] == contact and event["data"]["reason"] == "unsubscribed"
        assert [i["reason"] for i in (await feed(client, account))["suppressions"]] == ["unsubscribed"]
        assert b"account" not in receiver.received(f"/{name}")[0].body  # the entry's note stays home
    # The address is on the list now: no account reveals or enrolls it again.
    third = await factory.account(credits=10)
    refused = await client.post(f"/api/v1/contacts/{contact}/reveal", headers=third.headers())
    assert refused.status_code == 451
