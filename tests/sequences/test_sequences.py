"""Outbound sequencing (D34) over the real API, a real SMTP server on loopback (aiosmtpd) and the
worker's functions at the test clock: mailboxes (passwords sealed, private hosts refused), templates
refused at creation, enrollment rules, sending with threading and unsubscribe headers, send windows,
suppression at send time, daily caps and spacing, bounces and retries, the bounce-rate pause,
one-click unsubscribe, replies and DSNs handed in, pause and resume, versions."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from email import message_from_bytes
from email.policy import default
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests import factories
from tests.conftest import START, test_settings
from tests.factories import Factory
from tests.sequences import mail_samples
from tests.sequences.smtp_server import SmtpSink
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.models import Mailbox, SequenceMessage, Suppression, WebhookDelivery
from vpx.sequences import sending
from vpx.sequences.sending import claiming

MONDAY_9AM_UTC = datetime(2026, 11, 16, 9, 0, tzinfo=UTC)


@pytest.fixture
def settings(database_url: str) -> Settings:
    return test_settings(database_url, mailbox_allow_private=True, worker_in_process=False, webhook_allow_private=True)


@pytest.fixture(autouse=True)
def monday(clock: FixedClock) -> None:
    clock.set(MONDAY_9AM_UTC)


async def run(app: FastAPI) -> int:
    return await sending.run_due_sends(
        app.state.database, box=app.state.secrets, settings=app.state.settings, clock=app.state.clock
    )


async def mailbox(client: httpx.AsyncClient, account: factories.TestAccount, sink: SmtpSink, **fields: Any) -> str:
    body = {
        "email": "sam@seller.example",
        "from_name": "Sam Seller",
        "smtp_host": sink.host,
        "smtp_port": sink.port,
        "smtp_security": "none",
        "daily_limit": 30,
        "send_interval_seconds": 0,
        "postal_address": "Seller Inc, 1 Main St, Denver CO 80202",
    }
    body.update(fields)
    response = await client.post("/api/v1/mailboxes", json=body, headers=account.headers("full"))
    assert response.status_code == 201, response.text
    mailbox_id: str = response.json()["id"]
    return mailbox_id


STEPS = [
    {
        "type": "email",
        "subject": "Hello {{ contact.business_name }}",
        "body": "Hi from {{ mailbox.from_name }} to {{ contact.city }}.",
    },
    {
        "type": "email",
        "wait": {"days": 2},
        "subject": "Following up",
        "body": "Just checking, {{ contact.business_name }}.",
    },
]


async def sequence(
    client: httpx.AsyncClient, account: factories.TestAccount, mailbox_id: str, **fields: Any
) -> dict[str, Any]:
    body = {"name": "Plumbers", "mailbox_id": mailbox_id, "steps": STEPS}
    body.update(fields)
    response = await client.post("/api/v1/sequences", json=body, headers=account.headers("full"))
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def revealed(
    client: httpx.AsyncClient, factory: Factory, account: factories.TestAccount, count: int = 1, **fields: Any
) -> list[str]:
    ids = []
    for i in range(count):
        values = {"business_name": f"Acme Plumbing {i}", "email": f"owner{i}@acme{i}.example", "phone": None}
        values.update(fields)
        contact_id = await factory.contact(**values)
        assert (
            await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=account.headers())
        ).status_code == 200
        ids.append(contact_id)
    return ids


async def enroll(
    client: httpx.AsyncClient, account: factories.TestAccount, sequence_id: str, ids: list[str]
) -> list[dict[str, Any]]:
    response = await client.post(
        f"/api/v1/sequences/{sequence_id}/enrollments", json={"contact_ids": ids}, headers=account.headers("full")
    )
    assert response.status_code == 200, response.text
    results: list[dict[str, Any]] = response.json()["results"]
    return results


async def enrollments(
    client: httpx.AsyncClient, account: factories.TestAccount, sequence_id: str
) -> list[dict[str, Any]]:
    response = await client.get(f"/api/v1/sequences/{sequence_id}/enrollments", headers=account.headers("full"))
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["enrollments"]
    return found


async def events(app: FastAPI) -> list[str]:
    async with app.state.database.read_sessions() as session:
        return list(await session.scalars(select(WebhookDelivery.event_type).order_by(WebhookDelivery.id)))


# --- Mailboxes ---


async def test_mailbox_passwords_are_sealed_and_never_shown(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink
) -> None:
    account = await factory.account()
    smtp_sink.username, smtp_sink.password = "sam", "s3cret-pass"
    mailbox_id = await mailbox(client, account, smtp_sink, smtp_username="sam", smtp_password="s3cret-pass")
    shown = await client.get(f"/api/v1/mailboxes/{mailbox_id}", headers=account.headers("full"))
    assert shown.json()["smtp_password_set"] is True and "s3cret" not in shown.text
    async with app.state.database.read_sessions() as session:
        sealed = await session.scalar(select(Mailbox.smtp_password_sealed))
    assert sealed is not None and "s3cret" not in sealed
    verified = await client.post(f"/api/v1/mailboxes/{mailbox_id}/verify", headers=account.headers("full"))
    assert verified.status_code == 200 and verified.json() == {"smtp": "ok", "imap": "not_configured"}
    smtp_sink.password = "changed"
    refused = await client.post(f"/api/v1/mailboxes/{mailbox_id}/verify", headers=account.headers("full"))
    assert refused.status_code == 422 and refused.json()["errors"] == [
        {"field": "smtp", "message": "authentication failed"}
    ]
    assert "s3cret" not in refused.text
    listed = await client.get("/api/v1/mailboxes", headers=account.headers("full"))
    assert [m["id"] for m in listed.json()["mailboxes"]] == [mailbox_id]
    other = await factory.account()
    assert (await client.get(f"/api/v1/mailboxes/{mailbox_id}", headers=other.headers("full"))).status_code == 404


async def test_private_mail_hosts_are_refused_unless_allowed(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink
) -> None:
    account = await factory.account()
    app.state.settings = app.state.settings.model_copy(update={"mailbox_allow_private": False})
    for host in ("127.0.0.1", "10.0.0.5", "169.254.169.254", "localhost"):
        response = await client.post(
            "/api/v1/mailboxes",
            json={
                "email": "a@b.example",
                "smtp_host": host,
                "smtp_port": 25,
                "smtp_security": "none",
                "postal_address": "1 Main St, Denver",
            },
            headers=account.headers("full"),
        )
        assert response.status_code == 422 and "refused" in response.json()["detail"], host
    assert (await client.get("/api/v1/mailboxes", headers=account.headers("full"))).json()["mailboxes"] == []


# --- Sequences and templates ---


@pytest.mark.parametrize(
    ("steps", "field"),
    [
        ([{"type": "email", "subject": "Hi {{ contact.nickname }}", "body": "x"}], "steps[0].subject"),
        ([{"type": "email", "subject": "Hi", "body": "{{ secret }}"}], "steps[0].body"),
        ([{"type": "email", "subject": "Hi", "body": "{% for %}"}], "steps[0].body"),
        (
            [
                {"type": "email", "subject": "Hi", "body": "ok"},
                {"type": "email", "subject": "{{ ''.__class__ }}", "body": "x"},
            ],
            "steps[1].subject",
        ),
    ],
)
async def test_a_template_naming_an_unknown_variable_is_refused_at_creation(
    client: httpx.AsyncClient, factory: Factory, smtp_sink: SmtpSink, steps: list[dict[str, Any]], field: str
) -> None:
    account = await factory.account()
    mailbox_id = await mailbox(client, account, smtp_sink)
    response = await client.post(
        "/api/v1/sequences",
        json={"name": "x", "mailbox_id": mailbox_id, "steps": steps},
        headers=account.headers("full"),
    )
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == field, response.text
    assert (await client.get("/api/v1/sequences", headers=account.headers("full"))).json()["sequences"] == []


async def test_enrollment_takes_only_revealed_unsuppressed_contacts_with_an_email(
    client: httpx.AsyncClient, factory: Factory, smtp_sink: SmtpSink
) -> None:
    account = await factory.account(credits=10)
    created = await sequence(client, account, await mailbox(client, account, smtp_sink))
    good, blocked = await revealed(client, factory, account, 2)
    no_email = (await revealed(client, factory, account, email=None, business_name="Nomail Co"))[0]
    hidden = await factory.contact(business_name="Hidden Co", email="x@hidden.example")
    await factory.suppress("email", "owner1@acme1.example")
    results = await enroll(client, account, created["id"], [good, blocked, no_email, hidden, "ct_999999", good])
    assert [(r["contact_id"], r["status"]) for r in results] == [
        (good, "enrolled"),
        (blocked, "suppressed"),
        (no_email, "no_email"),
        (hidden, "not_revealed"),
        ("ct_999999", "not_found"),
    ]
    again = await enroll(client, account, created["id"], [good])
    assert again[0]["status"] == "already_enrolled" and again[0]["enrollment_id"] == results[0]["enrollment_id"]


# --- Sending ---


async def test_steps_go_in_order_threaded_with_one_click_unsubscribe_and_the_postal_address(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink, clock: FixedClock
) -> None:
    account = await factory.account(credits=10)
    created = await sequence(client, account, await mailbox(client, account, smtp_sink))
    [contact] = await revealed(client, factory, account, city="Boulder")
    await enroll(client, account, created["id"], [contact])
    assert await run(app) == 1
    [first] = smtp_sink.received
    message = first.message()
    assert message["Subject"] == "Hello Acme Plumbing 0" and message["To"] == "owner0@acme0.example"
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert message["List-Unsubscribe"].startswith("<http://127.0.0.1:8000/u/")
    body = message.get_content()
    assert "Hi from Sam Seller to Boulder." in body and body.rstrip().endswith("Denver CO 80202")
    [shown] = await enrollments(client, account, created["id"])
    assert shown["status"] == "active" and shown["step"] == 1
    assert shown["messages"][0]["message_id"] == message["Message-ID"]
    assert datetime.fromisoformat(shown["next_due_at"]) == MONDAY_9AM_UTC + timedelta(days=2)
    assert await run(app) == 0  # not due yet
    clock.set(MONDAY_9AM_UTC + timedelta(days=2, minutes=1))
    assert await run(app) == 1
    second = smtp_sink.received[1].message()
    assert second["In-Reply-To"] == message["Message-ID"] and message["Message-ID"] in second["References"]
    [done] = await enrollments(client, account, created["id"])
    assert done["status"] == "finished" and done["next_due_at"] is None and len(done["messages"]) == 2
    assert await events(app) == []  # no subscription: nothing queued
    assert await run(app) == 0


async def test_a_step_outside_the_send_window_waits_for_it_in_the_contacts_time(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink, clock: FixedClock
) -> None:
    account = await factory.account(credits=10)
    window = {"days": ["mon", "tue", "wed", "thu", "fri"], "start": "09:00", "end": "17:00", "timezone": "contact"}
    created = await sequence(client, account, await mailbox(client, account, smtp_sink), send_window=window)
    clock.set(datetime(2026, 11, 21, 20, 0, tzinfo=UTC))  # Saturday
    [contact] = await revealed(client, factory, account, state="CA", city="Fresno")
    await enroll(client, account, created["id"], [contact])
    [shown] = await enrollments(client, account, created["id"])
    # Monday 09:00 in Los Angeles is 17:00 UTC.
    assert datetime.fromisoformat(shown["next_due_at"]) == datetime(2026, 11, 23, 17, 0, tzinfo=UTC)
    assert await run(app) == 0
    clock.set(datetime(2026, 11, 23, 17, 0, tzinfo=UTC))
    assert await run(app) == 1 and len(smtp_sink.received) == 1


async def test_suppression_is_checked_at_the_moment_of_sending(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink
) -> None:
    account = await factory.account(credits=10)
    created = await sequence(client, account, await mailbox(client, account, smtp_sink))
    [contact] = await revealed(client, factory, account)
    await enroll(client, account, created["id"], [contact])
    # An entry that reaches the list without ending the enrollments it covers (as a registry merge
    # copies one onto the kept contact; one added through the service ends them at once): the check
    # at the moment of sending still holds the email back.
    async with app.state.database.write_sessions() as session, session.begin():
        session.add(
            Suppression(kind="email", value="owner0@acme0.example", reason="do_not_contact", note="", created_at=START)
        )
    assert await run(app) == 1
    assert smtp_sink.received == []
    [shown] = await enrollments(client, account, created["id"])
    assert (shown["status"], shown["stop_reason"]) == ("stopped", "suppressed")


async def test_the_daily_cap_is_rolling_and_spacing_holds(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink, clock: FixedClock
) -> None:
    account = await factory.account(credits=10)
    capped = await mailbox(client, account, smtp_sink, daily_limit=2)
    created = await sequence(client, account, capped, steps=STEPS[:1])
    await enroll(client, account, created["id"], await revealed(client, factory, account, 3))
    assert await run(app) == 2 and len(smtp_sink.received) == 2
    clock.set(MONDAY_9AM_UTC + timedelta(hours=23))
    assert await run(app) == 0  # the cap is over the last 24 hours, not the calendar day
    clock.set(MONDAY_9AM_UTC + timedelta(hours=24, seconds=1))
    assert await run(app) == 1 and len(smtp_sink.received) == 3
    spaced = await mailbox(client, account, smtp_sink, send_interval_seconds=60)
    other = await sequence(client, account, spaced, steps=STEPS[:1])
    await enroll(client, account, other["id"], await revealed(client, factory, account, 2, business_name="Beta"))
    assert await run(app) == 1
    clock.set(clock.now() + timedelta(seconds=59))
    assert await run(app) == 0
    clock.set(clock.now() + timedelta(seconds=14))  # 60 s plus up to 20 % jitter
    assert await run(app) == 1 and len(smtp_sink.received) == 5


async def test_a_mailbox_held_by_its_cap_does_not_hold_up_the_others(
    client: httpx.AsyncClient,
    factory: Factory,
    app: FastAPI,
    smtp_sink: SmtpSink,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A round takes two steps: the capped mailbox's backlog, due first, must not fill every round.
    monkeypatch.setattr(claiming, "BATCH", 2)
    account = await factory.account(credits=20)
    capped = await mailbox(client, account, smtp_sink, daily_limit=1)
    backlog = await sequence(client, account, capped, steps=STEPS[:1])
    await enroll(client, account, backlog["id"], await revealed(client, factory, account, 6))
    clock.set(MONDAY_9AM_UTC + timedelta(minutes=1))
    free = await mailbox(client, account, smtp_sink, email="kim@seller.example")
    other = await sequence(client, account, free, steps=STEPS[:1])
    await enroll(client, account, other["id"], await revealed(client, factory, account, 3, business_name="Beta"))
    sent = sum([await run(app) for _ in range(3)])
    assert sent == 4  # one from the capped mailbox, all three of the other
    assert sorted(m.sender for m in smtp_sink.received) == ["kim@seller.example"] * 3 + ["sam@seller.example"]
    # Once its send is settled, the mailbox is held until that send turns 24 hours old: until then
    # the scheduler passes it by.
    clock.set(MONDAY_9AM_UTC + timedelta(minutes=10))
    assert await run(app) == 0
    async with app.state.database.read_sessions() as session:
        held = await session.get(Mailbox, capped)
    assert held is not None and held.next_send_at == MONDAY_9AM_UTC + timedelta(minutes=1, hours=24)


@pytest.mark.postgres_only
async def test_workers_claiming_at_once_never_take_a_step_twice_and_keep_the_cap(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink, backend: str
) -> None:
    if backend != "postgresql":
        pytest.skip("concurrent claims are proven on PostgreSQL (SQLite serialises every writer)")
    account = await factory.account(credits=50)
    shared = await mailbox(client, account, smtp_sink, daily_limit=25)
    ids = await revealed(client, factory, account, 20)
    for name in ("First", "Second"):
        created = await sequence(client, account, shared, name=name, steps=STEPS[:1])
        await enroll(client, account, created["id"], ids)
    lease = timedelta(seconds=60)
    waves = await asyncio.gather(
        *(sending.claim_due(app.state.database, now=MONDAY_9AM_UTC, lease=lease) for _ in range(6))
    )
    claimed = [item.enrollment_id for wave in waves for item in wave]
    assert len(claimed) == len(set(claimed)) == 25  # 40 due, the cap lets 25 go, none twice
    async with app.state.database.read_sessions() as session:
        rows = list(await session.scalars(select(SequenceMessage.enrollment_id)))
    assert sorted(rows) == sorted(claimed)
    assert await sending.claim_due(app.state.database, now=MONDAY_9AM_UTC, lease=lease) == []


async def test_a_refusal_bounces_and_a_tempfail_is_tried_again(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink, clock: FixedClock
) -> None:
    account = await factory.account(credits=10)
    created = await sequence(client, account, await mailbox(client, account, smtp_sink), steps=STEPS[:1])
    refused, delayed = await revealed(client, factory, account, 2)
    smtp_sink.refuse("owner0@acme0.example")
    smtp_sink.tempfail_next()
    await enroll(client, account, created["id"], [refused, delayed])
    assert await run(app) == 2
    shown = {e["contact_id"]: e for e in await enrollments(client, account, created["id"])}
    assert shown[refused]["status"] == "bounced" and shown[delayed]["status"] == "active"
    assert smtp_sink.received == []
    clock.set(MONDAY_9AM_UTC + timedelta(minutes=5, seconds=1))
    assert await run(app) == 1 and len(smtp_sink.received) == 1
    shown = {e["contact_id"]: e for e in await enrollments(client, account, created["id"])}
    assert shown[delayed]["status"] == "finished"


async def test_five_tempfails_over_a_day_end_as_a_bounce(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink, clock: FixedClock
) -> None:
    account = await factory.account(credits=10)
    created = await sequence(client, account, await mailbox(client, account, smtp_sink), steps=STEPS[:1])
    await enroll(client, account, created["id"], await revealed(client, factory, account))
    smtp_sink.tempfail_next(times=5)
    tries = 0
    for _ in range(10):
        tries += await run(app)
        clock.set(clock.now() + timedelta(hours=21))
    [shown] = await enrollments(client, account, created["id"])
    assert tries == 5 and shown["status"] == "bounced" and smtp_sink.received == []
    async with app.state.database.read_sessions() as session:
        message = await session.scalar(select(SequenceMessage))
    assert message is not None and message.attempts == 5 and "451" in (message.last_reply or "")


async def test_stopping_an_enrollment_drops_its_message_waiting_for_a_retry(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink, clock: FixedClock
) -> None:
    account = await factory.account(credits=10)
    created = await sequence(client, account, await mailbox(client, account, smtp_sink), steps=STEPS[:1])
    await enroll(client, account, created["id"], await revealed(client, factory, account))
    smtp_sink.tempfail_next()
    assert await run(app) == 1
    [shown] = await enrollments(client, account, created["id"])
    stopped = await client.delete(f"/api/v1/enrollments/{shown['id']}", headers=account.headers("full"))
    assert stopped.status_code == 204, stopped.text
    async with app.state.database.read_sessions() as session:
        message = await session.scalar(select(SequenceMessage))
    assert message is not None and message.status == "stopped" and message.next_attempt_at is None
    clock.set(MONDAY_9AM_UTC + timedelta(hours=2))
    assert await run(app) == 0 and smtp_sink.received == []


async def test_a_mailbox_bouncing_too_much_pauses_its_sequences(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink
) -> None:
    account = await factory.account(credits=20)
    mailbox_id = await mailbox(client, account, smtp_sink)
    created = await sequence(client, account, mailbox_id, steps=STEPS[:1])
    contacts = await revealed(client, factory, account, 12)
    smtp_sink.refuse("owner3@acme3.example")
    await enroll(client, account, created["id"], contacts)
    await run(app)
    shown = (await client.get(f"/api/v1/mailboxes/{mailbox_id}", headers=account.headers("full"))).json()
    assert shown["status"] == "paused" and shown["pause_reason"].startswith("bounce_rate")
    paused = (await client.get(f"/api/v1/sequences/{created['id']}", headers=account.headers("full"))).json()
    assert paused["status"] == "paused" and "bounce_rate" in paused["pause_reason"]
    sent = len(smtp_sink.received)
    assert sent >= 9 and await run(app) == 0
    resumed = await client.patch(
        f"/api/v1/mailboxes/{mailbox_id}", json={"status": "active"}, headers=account.headers("full")
    )
    assert resumed.json()["status"] == "active"
    again = (await client.get(f"/api/v1/sequences/{created['id']}", headers=account.headers("full"))).json()
    assert again["status"] == "active"


# --- Unsubscribe, replies, bounces ---


async def test_one_click_unsubscribe_acts_at_once_and_for_good(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink
) -> None:
    account = await factory.account(credits=10)
    mailbox_id = await mailbox(client, account, smtp_sink)
    first, second = await sequence(client, account, mailbox_id), await sequence(client, account, mailbox_id)
    [contact] = await revealed(client, factory, account)
    await enroll(client, account, first["id"], [contact])
    await enroll(client, account, second["id"], [contact])
    assert await run(app) == 2
    link = smtp_sink.received[0].message()["List-Unsubscribe"].strip("<>")
    path = httpx.URL(link).path
    page = await client.get(path)
    assert page.status_code == 200 and "Unsubscribe" in page.text and "o•••••@acme0.example" in page.text
    assert (await enrollments(client, account, first["id"]))[0]["status"] == "active"  # a GET changes nothing
    forged = await client.post(
        path[:-3] + "xyz",
        content="List-Unsubscribe=One-Click",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert forged.status_code == 404
    done = await client.post(
        path, content="List-Unsubscribe=One-Click", headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert done.status_code == 200
    for created in (first, second):
        [shown] = await enrollments(client, account, created["id"])
        assert shown["status"] == "unsubscribed"
    third = await sequence(client, account, mailbox_id)
    assert (await enroll(client, account, third["id"], [contact]))[0]["status"] == "suppressed"
    again = await client.post(
        path, content="List-Unsubscribe=One-Click", headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert again.status_code == 200


async def post_inbound(
    client: httpx.AsyncClient, account: factories.TestAccount, mailbox_id: str, raw: bytes
) -> dict[str, Any]:
    response = await client.post(
        f"/api/v1/mailboxes/{mailbox_id}/inbound",
        content=raw,
        headers={**account.headers("full"), "Content-Type": "message/rfc822"},
    )
    assert response.status_code == 202, response.text
    result: dict[str, Any] = response.json()
    return result


async def test_a_reply_stops_an_enrollment_an_auto_reply_does_not_a_dsn_bounces(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink
) -> None:
    account = await factory.account(credits=10)
    mailbox_id = await mailbox(client, account, smtp_sink)
    created = await sequence(client, account, mailbox_id)
    replier, bouncer = await revealed(client, factory, account, 2)
    await enroll(client, account, created["id"], [replier, bouncer])
    assert await run(app) == 2
    by_to = {r.message()["To"]: r for r in smtp_sink.received}
    to_replier, to_bouncer = by_to["owner0@acme0.example"], by_to["owner1@acme1.example"]
    auto = await post_inbound(client, account, mailbox_id, mail_samples.rfc3834_auto_reply(to_replier.message_id or ""))
    assert auto["kind"] == "auto_reply"
    shown = {e["contact_id"]: e for e in await enrollments(client, account, created["id"])}
    assert shown[replier]["status"] == "active"
    # The samples share one Message-ID; a person's reply is another message than the auto-reply.
    reply = mail_samples.plain_reply(to_replier.message_id or "").replace(b"reply-1@", b"reply-2@")
    answered = await post_inbound(client, account, mailbox_id, reply)
    assert answered["kind"] == "reply" and answered["enrollment_id"] == shown[replier]["id"]
    assert (await post_inbound(client, account, mailbox_id, reply))["kind"] == "duplicate"
    bounced = await post_inbound(client, account, mailbox_id, mail_samples.dsn_failed(to_bouncer.data))
    assert bounced["kind"] == "bounce" and bounced["enrollment_id"] == shown[bouncer]["id"]
    shown = {e["contact_id"]: e for e in await enrollments(client, account, created["id"])}
    assert shown[replier]["status"] == "replied" and shown[bouncer]["status"] == "bounced"
    wrong = await client.post(
        f"/api/v1/mailboxes/{mailbox_id}/inbound",
        content=b"x",
        headers={**account.headers("full"), "Content-Type": "text/plain"},
    )
    assert wrong.status_code == 400


async def test_pause_freezes_due_steps_resume_sends_them_and_edits_make_versions(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink, clock: FixedClock
) -> None:
    account = await factory.account(credits=10)
    created = await sequence(client, account, await mailbox(client, account, smtp_sink))
    first, later = await revealed(client, factory, account, 2)
    await enroll(client, account, created["id"], [first])
    paused = await client.post(f"/api/v1/sequences/{created['id']}/pause", headers=account.headers("full"))
    assert paused.json()["status"] == "paused"
    assert await run(app) == 0
    [shown] = await enrollments(client, account, created["id"])
    assert shown["status"] == "paused"
    edited = await client.patch(
        f"/api/v1/sequences/{created['id']}",
        json={"steps": [{"type": "email", "subject": "New subject", "body": "New body"}]},
        headers=account.headers("full"),
    )
    assert edited.json()["version"] == 2
    await enroll(client, account, created["id"], [later])
    clock.set(MONDAY_9AM_UTC + timedelta(hours=5))
    await client.post(f"/api/v1/sequences/{created['id']}/resume", headers=account.headers("full"))
    assert await run(app) == 2
    subjects = sorted(r.message()["Subject"] for r in smtp_sink.received)
    assert subjects == ["Hello Acme Plumbing 0", "New subject"]  # each on its own version
    shown_all = {e["contact_id"]: e for e in await enrollments(client, account, created["id"])}
    assert shown_all[first]["status"] == "active" and shown_all[later]["status"] == "finished"
    stopped = await client.delete(f"/api/v1/enrollments/{shown_all[first]['id']}", headers=account.headers("full"))
    assert stopped.status_code == 204
    shown_all = {e["contact_id"]: e for e in await enrollments(client, account, created["id"])}
    assert (shown_all[first]["status"], shown_all[first]["stop_reason"]) == ("stopped", "by_user")
    clock.set(MONDAY_9AM_UTC + timedelta(days=3))
    assert await run(app) == 0


async def test_sequence_events_reach_subscriptions(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink
) -> None:
    account = await factory.account(credits=10)
    subscribed = await client.post(
        "/api/v1/webhooks",
        json={
            "url": "http://127.0.0.1:9/vpx",
            "events": ["sequence.step_sent", "sequence.finished", "sequence.bounced"],
        },
        headers=account.headers("full"),
    )
    assert subscribed.status_code == 201, subscribed.text
    created = await sequence(client, account, await mailbox(client, account, smtp_sink), steps=STEPS[:1])
    await enroll(client, account, created["id"], await revealed(client, factory, account))
    await run(app)
    assert await events(app) == ["sequence.step_sent", "sequence.finished"]
    message = message_from_bytes(smtp_sink.received[0].data, policy=default)
    assert message["Message-ID"]
