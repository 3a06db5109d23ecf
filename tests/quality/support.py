"""Helpers of the data-quality tests: buyers, reports, the ledger's refunds, balances, events."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.factories import Factory, TestAccount
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import payload
from vpx.clock import Clock
from vpx.models import LedgerEntry
from vpx.models.quality import ContactReport, DataRefund
from vpx.quality import bounces

ADMIN_TOKEN = "operator-token-for-tests-0123456789"


async def buyer(
    client: httpx.AsyncClient, factory: Factory, receiver: Receiver | None = None, name: str = "buyer"
) -> TestAccount:
    """An account with credits; with ``receiver``, a webhook subscription to contact.corrected at /<name>."""
    account = await factory.account(credits=100, name=name)
    if receiver is not None:
        created = await client.post(
            "/api/v1/webhooks",
            json={"url": receiver.url(f"/{name}"), "events": ["contact.corrected"]},
            headers=account.headers("full"),
        )
        assert created.status_code == 201, created.text
    return account


async def reveal(client: httpx.AsyncClient, account: TestAccount, contact_id: str) -> None:
    response = await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=account.headers())
    assert response.status_code == 200, response.text


async def report(
    client: httpx.AsyncClient,
    account: TestAccount,
    contact_id: str,
    field: str = "phone",
    problem: str = "wrong",
    *,
    note: str | None = None,
    status: int = 200,
    key_type: str = "live",
) -> dict[str, Any]:
    body: dict[str, Any] = {"field": field, "problem": problem}
    if note is not None:
        body["note"] = note
    response = await client.post(f"/api/v1/contacts/{contact_id}/report", json=body, headers=account.headers(key_type))
    assert response.status_code == status, response.text
    found: dict[str, Any] = response.json()
    return found


async def refunds(client: httpx.AsyncClient, account: TestAccount) -> list[dict[str, Any]]:
    """The account's ledger entries of kind refund, oldest first."""
    response = await client.get("/api/v1/account/ledger", params={"limit": 100}, headers=account.headers("ro"))
    assert response.status_code == 200, response.text
    return [e for e in reversed(response.json()["entries"]) if e["kind"] == "refund"]


async def balance(client: httpx.AsyncClient, account: TestAccount) -> Decimal:
    response = await client.get("/api/v1/account", headers=account.headers("ro"))
    return Decimal(str(response.json()["balance"]["total"]))


async def ledger_total(app: FastAPI, account_id: str) -> Decimal:
    """The sum of every ledger entry of the account: what its balance must be."""
    async with app.state.database.read_sessions() as session:
        entries = list(await session.scalars(select(LedgerEntry.amount).where(LedgerEntry.account_id == account_id)))
    return sum(entries, Decimal(0))


async def refund_rows(app: FastAPI) -> list[tuple[str, int, str, Decimal, str]]:
    async with app.state.database.read_sessions() as session:
        rows = await session.execute(
            select(
                DataRefund.account_id, DataRefund.contact_id, DataRefund.field, DataRefund.credits, DataRefund.reason
            ).order_by(DataRefund.id)
        )
        return [(row[0], row[1], row[2], row[3], row[4]) for row in rows]


async def report_count(app: FastAPI) -> int:
    async with app.state.database.read_sessions() as session:
        return int(await session.scalar(select(func.count()).select_from(ContactReport)) or 0)


async def review_bounces(app: FastAPI, clock: Clock | None = None) -> int:
    """One round of the worker's bounce reviews."""
    return await bounces.review_pending(app.state.database, settings=app.state.settings, clock=clock or app.state.clock)


def corrected(receiver: Receiver, path: str) -> list[dict[str, Any]]:
    return [payload(r.body) for r in receiver.received(path) if payload(r.body)["type"] == "contact.corrected"]
