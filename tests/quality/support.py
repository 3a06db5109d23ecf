"""Helpers of the data-quality tests: buyers, reports, the ledger's refunds, balances, events."""

from __future__ import annotations

import hashlib
from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import func, select, update

from tests.factories import Factory, TestAccount
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import payload
from vpx.clock import Clock
from vpx.models import Contact, LedgerEntry
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


def network_of(account: TestAccount) -> str:
    """A documentation address (RFC 3849) in a /48 of the account's own: reports from two accounts come
    from two networks unless a test says otherwise."""
    digest = hashlib.sha256(account.id.encode()).hexdigest()
    return f"2001:db8:{digest[:4]}::7"


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
    address: str | None = None,
) -> dict[str, Any]:
    """The account reports the field, from ``address`` (by default an address of its own network)."""
    body: dict[str, Any] = {"field": field, "problem": problem}
    if note is not None:
        body["note"] = note
    headers = {**account.headers(key_type), "X-Forwarded-For": address or network_of(account)}
    response = await client.post(f"/api/v1/contacts/{contact_id}/report", json=body, headers=headers)
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


async def set_email_status(app: FastAPI, contact_id: str, status: str) -> None:
    """What the worker's MX check would write (``no_mx``: the address's domain takes no mail)."""
    async with app.state.database.write_sessions() as session, session.begin():
        await session.execute(
            update(Contact).where(Contact.id == int(contact_id.removeprefix("ct_"))).values(email_status=status)
        )


async def review_bounces(app: FastAPI, clock: Clock | None = None) -> int:
    """One round of the worker's bounce reviews."""
    return await bounces.review_pending(app.state.database, settings=app.state.settings, clock=clock or app.state.clock)


def corrected(receiver: Receiver, path: str) -> list[dict[str, Any]]:
    return [payload(r.body) for r in receiver.received(path) if payload(r.body)["type"] == "contact.corrected"]
