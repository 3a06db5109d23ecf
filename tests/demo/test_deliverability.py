"""The demo's emails have a realistic mix of deliverability (issue 39): `vpx demo` answers for its own
`.example` domains (most take mail, about one in seven does not), through the writer the worker's
look-ups use, so previews show deliverable emails and the email_status filter finds them; a catalogue
an earlier version loaded (every email `no_mx`) is put right by the next `vpx demo`; the worker never
asks the DNS about the demo's domains."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select, update

from tests.demo.support import load_demo
from tests.factories import Factory
from vpx.deliverability.service import EmailChecks
from vpx.demo import deliverability as demo_deliverability
from vpx.demo import service as demo_service
from vpx.models import Contact, EmailDomain

pytestmark = pytest.mark.asyncio


async def _statuses(app: FastAPI) -> dict[str, int]:
    async with app.state.database.read_sessions() as session:
        rows = await session.execute(
            select(Contact.email_status, func.count()).where(Contact.origin == "demo").group_by(Contact.email_status)
        )
        return {str(status): int(count) for status, count in rows}


async def test_the_demo_has_deliverable_emails_and_some_that_take_no_mail(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    await load_demo(app, contacts=1000, signals=0)
    statuses = await _statuses(app)
    assert set(statuses) == {"mx_found", "no_mx"}, statuses
    assert 0.08 < statuses["no_mx"] / 1000 < 0.22, statuses
    account = await factory.account()
    deliverable = (
        await client.get("/api/v1/contacts/search", params={"email_status": "mx_found", "limit": 100},
                         headers=account.headers())
    ).json()  # fmt: skip
    assert deliverable["total"] == statuses["mx_found"]
    assert all(c["email_deliverable"] for c in deliverable["contacts"])
    dead = (
        await client.get("/api/v1/contacts/search", params={"email_status": "no_mx"}, headers=account.headers())
    ).json()
    assert dead["total"] == statuses["no_mx"] and not any(c["email_deliverable"] for c in dead["contacts"])
    # Each answer is the demo's own, kept for as long as the demo is used: the worker asks nothing.
    async with app.state.database.read_sessions() as session:
        domains = list(await session.execute(select(EmailDomain.domain, EmailDomain.status, EmailDomain.expires_at)))
    assert len(domains) == 1000
    assert all(status == demo_deliverability.demo_answer(domain) for domain, status, _ in domains)
    assert min(expires for _, _, expires in domains) > app.state.clock.now() + timedelta(days=365 * 10)
    checks = EmailChecks.from_settings(app.state.database, app.state.settings, clock=app.state.clock)
    assert await checks.run_round() == 0
    assert await _statuses(app) == statuses


async def test_a_catalogue_loaded_before_is_put_right_by_the_next_demo(app: FastAPI) -> None:
    await load_demo(app, contacts=1000, signals=0)
    expected = await _statuses(app)
    # As an earlier version left it: every demo email no_mx (its domain reserved), no answers of its own.
    async with app.state.database.write_sessions() as session, session.begin():
        await session.execute(update(Contact).where(Contact.origin == "demo").values(email_status="no_mx"))
        await session.execute(update(EmailDomain).values(status="no_mx"))
        await session.execute(update(Contact).where(Contact.id == 1).values(email_status="bounced"))
    again = await demo_service.load_demo_catalogue(
        app.state.database, count=1000, seed=42, search=app.state.search, now=app.state.clock.now()
    )
    assert again == 0
    statuses = await _statuses(app)
    # A bounce is the address's own news: it stays.
    assert statuses["bounced"] == 1 and statuses["mx_found"] + statuses["no_mx"] == 999
    assert abs(statuses["mx_found"] - expected["mx_found"]) <= 1
