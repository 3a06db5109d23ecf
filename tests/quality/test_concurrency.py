"""Reports and bounces racing on one contact (D11: the ledger stays exact whatever the concurrency):
50 buyers each send their reports twice at once while the worker's bounce reviews run side by side
(several workers' worth); every reveal is refunded at most once per field, never past its price, each
account's ledger adds up to its balance, and each field is marked bad (its buyers told) once.

Runs on both databases; the PostgreSQL run is the one that races (many connections, one contact row)."""

from __future__ import annotations

import asyncio
from collections import Counter
from decimal import Decimal

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.factories import Factory
from tests.quality.support import balance, ledger_total, network_of, refund_rows, reveal, review_bounces
from vpx.clock import FixedClock
from vpx.models import LedgerEntry, WebhookDelivery
from vpx.models.quality import BadField, ContactReport, SequenceBounce
from vpx.quality import bounces

pytestmark = pytest.mark.asyncio
BUYERS = 50
BOUNCING = 10  # buyers whose own sequence bounced the email


async def test_fifty_buyers_reports_and_bounces_racing_refund_each_reveal_at_most_once(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, clock: FixedClock
) -> None:
    contact = await factory.contact(email="owner@acme.example")
    number = int(contact.removeprefix("ct_"))
    accounts = [await factory.account(credits=10, name=f"buyer {i}") for i in range(BUYERS)]
    for account in accounts:
        await client.post(
            "/api/v1/webhooks",
            json={"url": "http://127.0.0.1:9/hook", "events": ["contact.corrected"]},
            headers=account.headers("full"),
        )
    await asyncio.gather(*(reveal(client, account, contact) for account in accounts))
    async with app.state.database.write_sessions() as session, session.begin():
        for account in accounts[:BOUNCING]:
            await bounces.record_hard_bounce(
                session, account_id=account.id, contact_id=number, email="owner@acme.example", at=clock.now()
            )

    async def reports_of(index: int) -> list[httpx.Response]:
        account = accounts[index]
        fields = ("email", "phone") if index % 2 else ("email", "website", "email")
        return [
            await client.post(
                f"/api/v1/contacts/{contact}/report",
                json={"field": field, "problem": "wrong"},
                headers={**account.headers(), "X-Forwarded-For": network_of(account)},
            )
            for field in fields
        ]

    work = [reports_of(i) for i in range(BUYERS)] + [reports_of(i) for i in range(0, BUYERS, 5)]
    reviews = [review_bounces(app) for _ in range(4)]
    grouped, reviewed_now = await asyncio.gather(asyncio.gather(*work), asyncio.gather(*reviews))
    answered = [response for group in grouped for response in group]
    assert all(r.status_code == 200 for r in answered), {r.status_code: r.text for r in answered}
    assert sum(reviewed_now) == BOUNCING
    assert await review_bounces(app) == 0

    rows = await refund_rows(app)
    per_field = Counter((account_id, field) for account_id, _, field, _, _ in rows)
    assert max(per_field.values()) == 1
    # Every buyer reported the email, which bounced: each refunded a quarter for it, once.
    emails = {account_id: credits for account_id, _, field, credits, _ in rows if field == "email"}
    assert set(emails) == {a.id for a in accounts} and set(emails.values()) == {Decimal("0.25")}
    # Phones and websites: two or more buyers each, so each reporter refunded once.
    assert {f for _, f in per_field} == {"email", "phone", "website"}
    for account in accounts:
        paid = sum((credits for account_id, _, _, credits, _ in rows if account_id == account.id), Decimal(0))
        assert paid <= 1
        assert await ledger_total(app, account.id) == await balance(client, account) == 34 + paid
    async with app.state.database.read_sessions() as session:
        refund_entries = await session.scalar(
            select(func.count()).select_from(LedgerEntry).where(LedgerEntry.kind == "refund")
        )
        marks = list(await session.scalars(select(BadField.field).order_by(BadField.field)))
        told = await session.scalar(
            select(func.count()).select_from(WebhookDelivery).where(WebhookDelivery.event_type == "contact.corrected")
        )
        reports = await session.scalar(select(func.count()).select_from(ContactReport))
        reviewed = await session.scalar(
            select(func.count()).select_from(SequenceBounce).where(SequenceBounce.reviewed_at.is_not(None))
        )
    assert refund_entries == len(rows)
    assert marks == ["email", "phone", "website"]
    assert told == 3 * BUYERS  # each field's mark told every buyer once
    assert reports == sum(len({*(("email", "phone") if i % 2 else ("email", "website"))}) for i in range(BUYERS))
    assert reviewed == BOUNCING
