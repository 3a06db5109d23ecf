"""A hard bounce (a real SMTP server on loopback answering 550) in one account's sequence: that account
is refunded the email's share of its reveal exactly once when the bounce came within 30 days of the
reveal. A customer's own mail server can fake a 550, so only a corroborated bounce (the MX check finds
no mail for the domain, or an unrelated paying account's sequence bounces too) marks the email
bounced for every account, tells every buyer (contact.corrected, a real HTTP receiver), and confirms
and refunds a report of the email, before or after. Driven in process here;
tests/quality/test_real_processes.py runs the same through a real `vpx worker`."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests import factories
from tests.factories import Factory
from tests.quality.support import (
    ADMIN_TOKEN,
    balance,
    buyer,
    corrected,
    ledger_total,
    refund_rows,
    refunds,
    report,
    reveal,
    review_bounces,
    set_email_status,
)
from tests.sequences.smtp_server import SmtpSink
from tests.sequences.test_sequences import MONDAY_9AM_UTC, STEPS, enroll, mailbox, run, sequence
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliver_round
from vpx.clock import FixedClock
from vpx.quality import bounces

pytestmark = pytest.mark.asyncio
EMAIL = "owner@acme.example"


@pytest.fixture(autouse=True)
def monday(clock: FixedClock) -> None:
    clock.set(MONDAY_9AM_UTC)


async def bounce_in_sequence(
    app: FastAPI, client: httpx.AsyncClient, account: factories.TestAccount, sink: SmtpSink, contact_id: str
) -> None:
    """A one-step sequence of the account sends to the contact; the server refuses the address (550)."""
    created = await sequence(client, account, await mailbox(client, account, sink), steps=STEPS[:1])
    sink.refuse(EMAIL, 550, "5.1.1 User unknown")
    await enroll(client, account, created["id"], [contact_id])
    assert await run(app) == 1


async def email_status(client: httpx.AsyncClient, account: factories.TestAccount, contact_id: str) -> Any:
    response = await client.get(f"/api/v1/contacts/{contact_id}", headers=account.headers())
    return response.json()["email_status"]


async def test_a_bounce_in_one_accounts_sequence_refunds_it_once_and_tells_every_buyer(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, smtp_sink: SmtpSink, receiver: Receiver
) -> None:
    sender, other, onlooker = [await buyer(client, factory, receiver, n) for n in ("sender", "other", "onlooker")]
    contact = await factory.contact(email=EMAIL)
    for account in (sender, other):
        await reveal(client, account, contact)

    await bounce_in_sequence(app, client, sender, smtp_sink, contact)
    assert await refunds(client, sender) == []  # the worker applies the rules
    assert await review_bounces(app) == 1
    [entry] = await refunds(client, sender)
    assert entry["amount"] == 0.25 and entry["reference"] == contact
    assert "email" in entry["description"] and "bounced in your sequence" in entry["description"]
    assert await refunds(client, other) == [] and await refunds(client, onlooker) == []
    # One account's mail server alone is not believed for everyone: nobody else is told.
    for account in (sender, other):
        assert await email_status(client, account, contact) != "bounced"
    await deliver_round(app)
    assert corrected(receiver, "/sender") == [] and corrected(receiver, "/other") == []

    # An unrelated paying account's sequence bounces it too: corroborated, bounced for everyone.
    await bounce_in_sequence(app, client, other, smtp_sink, contact)
    assert await review_bounces(app) == 1
    assert [e["amount"] for e in await refunds(client, other)] == [0.25]
    for account in (sender, other):
        assert await email_status(client, account, contact) == "bounced"

    await deliver_round(app)
    for name in ("sender", "other"):
        [event] = corrected(receiver, f"/{name}")
        assert event["data"] == {
            "contact_id": contact,
            "fields": ["email"],
            "change": "marked_bad",
            "reason": "bounced",
            "corrected_at": event["data"]["corrected_at"],
        }
    assert corrected(receiver, "/onlooker") == []

    # The address bounced for everyone: another sequence of the sender refuses it, so it is not written
    # to, cannot bounce again, and nothing more is refunded or told.
    again = await sequence(client, sender, await mailbox(client, sender, smtp_sink), steps=STEPS[:1])
    [result] = await enroll(client, sender, again["id"], [contact])
    assert (result["status"], result["email_status"]) == ("undeliverable", "bounced")
    assert await run(app) == 0 and await review_bounces(app) == 0
    assert len(await refunds(client, sender)) == 1
    await deliver_round(app)
    assert len(corrected(receiver, "/sender")) == 1 and len(corrected(receiver, "/other")) == 1
    assert await ledger_total(app, sender.id) == await balance(client, sender)


async def test_a_bounce_past_30_days_after_the_reveal_marks_the_email_but_refunds_nothing(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, smtp_sink: SmtpSink, clock: FixedClock
) -> None:
    sender = await buyer(client, factory)
    contact = await factory.contact(email=EMAIL)
    await reveal(client, sender, contact)
    clock.set(MONDAY_9AM_UTC + timedelta(days=31))
    await bounce_in_sequence(app, client, sender, smtp_sink, contact)
    # The MX check answers before the bounce is reviewed, and corroborates it. (Had it answered before
    # the send, the address would not have been written to: a sequence writes to no no_mx address.)
    await set_email_status(app, contact, "no_mx")
    assert await review_bounces(app) == 1
    assert await refunds(client, sender) == []
    assert await email_status(client, sender, contact) == "bounced"


async def test_a_bounce_and_a_report_refund_the_reporter(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, smtp_sink: SmtpSink
) -> None:
    sender, early, late = [await buyer(client, factory) for _ in range(3)]
    contact = await factory.contact(email=EMAIL)
    for account in (sender, early, late):
        await reveal(client, account, contact)
    opened = await report(client, early, contact, "email", "wrong")
    assert opened["status"] == "open"

    await bounce_in_sequence(app, client, sender, smtp_sink, contact)
    await set_email_status(app, contact, "no_mx")  # the MX check, before the review, corroborates it
    await review_bounces(app)
    settled = await report(client, early, contact, "email", "wrong")
    assert settled["status"] == "confirmed" and settled["credits_refunded"] == 0.25
    [entry] = await refunds(client, early)
    assert "you reported was found to bounce" in entry["description"]
    # Reported after the bounce: confirmed and refunded at once.
    after = await report(client, late, contact, "email", "disconnected")
    assert after["status"] == "confirmed" and after["credits_refunded"] == 0.25
    assert sorted((row[0], row[4]) for row in await refund_rows(app)) == sorted(
        [(sender.id, "own_bounce"), (early.id, "bounce"), (late.id, "bounce")]
    )
    shown = (await client.get(f"/api/v1/admin/reports/{opened['id']}", headers={"X-Admin-Token": ADMIN_TOKEN})).json()
    assert [(h["action"], h["actor"]) for h in shown["history"]][-1] == ("confirmed", "rule:bounce")


async def test_the_bouncer_who_also_reported_is_refunded_once(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, smtp_sink: SmtpSink
) -> None:
    sender = await buyer(client, factory)
    contact = await factory.contact(email=EMAIL)
    await reveal(client, sender, contact)
    await report(client, sender, contact, "email", "wrong")
    await bounce_in_sequence(app, client, sender, smtp_sink, contact)
    await review_bounces(app)
    assert [e["amount"] for e in await refunds(client, sender)] == [0.25]


async def test_a_bounce_of_another_address_changes_nothing(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, clock: FixedClock
) -> None:
    sender = await buyer(client, factory)
    contact = await factory.contact(email=EMAIL)
    await reveal(client, sender, contact)
    async with app.state.database.write_sessions() as session, session.begin():
        await bounces.record_hard_bounce(
            session,
            account_id=sender.id,
            contact_id=int(contact.removeprefix("ct_")),
            email="dana.lee@acme.example",  # a decision-maker's own address
            at=clock.now(),
        )
    assert await review_bounces(app) == 1
    assert await refunds(client, sender) == [] and await refund_rows(app) == []
    assert await email_status(client, sender, contact) != "bounced"


async def test_a_bounce_believed_later_when_the_mx_check_finds_the_domain_dead(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, smtp_sink: SmtpSink, receiver: Receiver
) -> None:
    sender, other = [await buyer(client, factory, receiver, n) for n in ("sender", "other")]
    contact = await factory.contact(email=EMAIL)
    for account in (sender, other):
        await reveal(client, account, contact)
    await bounce_in_sequence(app, client, sender, smtp_sink, contact)
    assert await review_bounces(app) == 1
    assert await email_status(client, other, contact) != "bounced"
    assert await review_bounces(app) == 0  # nothing new: not looked at again
    await set_email_status(app, contact, "no_mx")  # the worker's MX check, later
    assert await review_bounces(app) == 1 and await review_bounces(app) == 0
    assert await email_status(client, other, contact) == "bounced"
    assert [e["amount"] for e in await refunds(client, sender)] == [0.25]  # paid once, not twice
    await deliver_round(app)
    assert len(corrected(receiver, "/other")) == 1


async def test_a_free_accounts_own_bounce_refunds_free_credits_only(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, smtp_sink: SmtpSink
) -> None:
    sender = await factory.account(name="free sender")  # never paid: 25 free credits
    contact = await factory.contact(email=EMAIL)
    await reveal(client, sender, contact)
    await bounce_in_sequence(app, client, sender, smtp_sink, contact)
    assert await review_bounces(app) == 1
    shown = (await client.get("/api/v1/account", headers=sender.headers("ro"))).json()["balance"]
    assert shown == {"free": 24.25, "paid": 0, "total": 24.25}
    assert await email_status(client, sender, contact) != "bounced"
