"""A hard bounce in one account's sequence marks the email bounced for every account (a real SMTP server
on loopback answering 550); soft bounces and refusals that are not about the address do not; and
``mark_bounced``'s own promises."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import test_settings
from tests.factories import Factory
from tests.sequences.smtp_server import SmtpSink, smtp_sink
from tests.sequences.test_sequences import MONDAY_9AM_UTC, STEPS, enroll, enrollments, mailbox, run, sequence
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.deliverability.service import mark_bounced
from vpx.models import Contact
from vpx.quality import bounces

__all__ = ["smtp_sink"]  # the SMTP server fixture


@pytest.fixture
def settings(database_url: str) -> Settings:
    return test_settings(database_url, mailbox_allow_private=True, worker_in_process=False, webhook_allow_private=True)


@pytest.fixture(autouse=True)
def monday(clock: FixedClock) -> None:
    clock.set(MONDAY_9AM_UTC)


async def status_seen_by(client: httpx.AsyncClient, headers: dict[str, str], contact_id: str) -> str:
    response = await client.get(f"/api/v1/contacts/{contact_id}", headers=headers)
    assert response.status_code == 200, response.text
    status: str = response.json()["email_status"]
    return status


async def test_a_hard_bounce_in_one_accounts_sequence_marks_the_email_for_every_account(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink, clock: FixedClock
) -> None:
    sender, other, onlooker = (
        await factory.account(credits=10),
        await factory.account(credits=10),
        await factory.account(),
    )
    contact_id = await factory.contact(email="owner@acme.example", phone=None)
    for account in (sender, other):
        assert (
            await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=account.headers())
        ).status_code == 200
    smtp_sink.refuse("owner@acme.example", 550, "5.1.1 User unknown")
    for account in (sender, other):  # one account's mail server alone is not taken for everyone
        created = await sequence(client, account, await mailbox(client, account, smtp_sink), steps=STEPS[:1])
        await enroll(client, account, created["id"], [contact_id])
        assert await run(app) == 1
        [shown] = await enrollments(client, account, created["id"])
        assert shown["status"] == "bounced"
        await bounces.review_pending(app.state.database, settings=app.state.settings, clock=clock)
        if account is sender:
            assert await status_seen_by(client, other.headers(), contact_id) != "bounced"

    for account in (sender, other):
        assert await status_seen_by(client, account.headers(), contact_id) == "bounced"
    preview = (await client.get(f"/api/v1/contacts/{contact_id}", headers=onlooker.headers())).json()
    # Found bad for everyone: no longer sold (nor shown as deliverable).
    assert preview["has_email"] is False and preview["email_deliverable"] is False
    async with app.state.database.read_sessions() as session:
        contact = await session.get(Contact, int(contact_id.removeprefix("ct_")))
    assert contact is not None and contact.email_checked_at == clock.now() and contact.email_domain == "acme.example"


@pytest.mark.parametrize(("code", "text"), [(554, "5.7.1 Message rejected as spam"), (552, "5.2.2 Mailbox full")])
async def test_a_refusal_that_is_not_about_the_address_marks_nothing(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink, code: int, text: str
) -> None:
    account = await factory.account(credits=10)
    contact_id = await factory.contact(email="owner@acme.example", phone=None)
    assert (await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=account.headers())).status_code == 200
    created = await sequence(client, account, await mailbox(client, account, smtp_sink), steps=STEPS[:1])
    smtp_sink.refuse("owner@acme.example", code, text)
    await enroll(client, account, created["id"], [contact_id])
    assert await run(app) == 1
    [shown] = await enrollments(client, account, created["id"])
    assert shown["status"] == "bounced"  # the enrollment stops all the same
    assert await status_seen_by(client, account.headers(), contact_id) == "unknown"


async def test_retries_running_out_are_no_hard_bounce(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, smtp_sink: SmtpSink, clock: FixedClock
) -> None:
    account = await factory.account(credits=10)
    contact_id = await factory.contact(email="owner@acme.example", phone=None)
    assert (await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=account.headers())).status_code == 200
    created = await sequence(client, account, await mailbox(client, account, smtp_sink), steps=STEPS[:1])
    await enroll(client, account, created["id"], [contact_id])
    smtp_sink.tempfail_next(times=5)
    for _ in range(10):
        await run(app)
        clock.set(clock.now() + timedelta(hours=21))
    [shown] = await enrollments(client, account, created["id"])
    assert shown["status"] == "bounced"
    assert await status_seen_by(client, account.headers(), contact_id) == "unknown"


async def test_mark_bounced_marks_once_and_only_the_contacts_own_email(
    app: FastAPI, factory: Factory, clock: FixedClock
) -> None:
    contact_id = int((await factory.contact(email="Owner@Acme.example", phone=None)).removeprefix("ct_"))
    without = int((await factory.contact(email=None, phone=None, business_name="No Email")).removeprefix("ct_"))
    async with app.state.database.write_sessions() as session, session.begin():
        assert not await mark_bounced(session, contact_id, clock.now(), email="dana.lee@acme.example")
        assert not await mark_bounced(session, without, clock.now())
        assert not await mark_bounced(session, 999_999, clock.now())
        assert await mark_bounced(session, contact_id, clock.now(), email="owner@acme.EXAMPLE")
        assert not await mark_bounced(session, contact_id, clock.now())
    async with app.state.database.read_sessions() as session:
        contact = await session.get(Contact, contact_id)
    assert contact is not None and contact.email_status == "bounced"


async def test_concurrent_bounces_mark_exactly_once(app: FastAPI, factory: Factory, clock: FixedClock) -> None:
    contact_id = int((await factory.contact(email="owner@acme.example", phone=None)).removeprefix("ct_"))

    async def one() -> bool:
        async with app.state.database.write_sessions() as session, session.begin():
            return await mark_bounced(session, contact_id, clock.now())

    assert sorted(await asyncio.gather(*(one() for _ in range(8)))) == [False] * 7 + [True]
