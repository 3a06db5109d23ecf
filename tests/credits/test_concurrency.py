"""D11 under load: balances never go below zero and the ledger stays exact, whatever the concurrency.

Runs on both databases; the PostgreSQL run is the one the brief asks for (many connections racing
for one account row)."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import httpx
from sqlalchemy import func, select

from tests.factories import Factory, details
from vpx.models import LedgerEntry, Reveal


async def test_200_concurrent_reveals_against_a_balance_of_50(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account(credits=25)  # 25 free + 25 granted
    rows = [
        {"business_name": f"Concurrent Co {i}", "city": "Austin", "state": "TX", "industry": "saas"} | details(i)
        for i in range(200)
    ]
    contacts = await factory.contacts(rows)
    responses = await asyncio.gather(
        *(client.post(f"/api/v1/contacts/{c}/reveal", headers=account.headers()) for c in contacts)
    )
    statuses = [r.status_code for r in responses]
    assert statuses.count(200) == 50
    assert statuses.count(402) == 150
    assert all(r.json()["code"] == "insufficient_credits" for r in responses if r.status_code == 402)
    body = (await client.get("/api/v1/account", headers=account.headers())).json()
    assert body["balance"] == {"total": 0, "free": 0, "paid": 0}
    async with factory.database.read_sessions() as session:
        total = await session.scalar(select(func.sum(LedgerEntry.amount)).where(LedgerEntry.account_id == account.id))
        reveals = await session.scalar(select(func.count()).select_from(Reveal))
        minimum = await session.scalar(
            select(func.min(LedgerEntry.balance_after)).where(LedgerEntry.account_id == account.id)
        )
    # Sums of the stored 1/10,000 units; 0 credits.
    assert Decimal(total or 0) == 0
    assert reveals == 50
    assert minimum is not None and Decimal(minimum) >= 0


async def test_concurrent_reveals_of_one_contact_charge_once(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    contact = await factory.contact()
    responses = await asyncio.gather(
        *(client.post(f"/api/v1/contacts/{contact}/reveal", headers=account.headers()) for _ in range(30))
    )
    assert all(r.status_code == 200 for r in responses)
    assert sorted(r.json()["credits_charged"] for r in responses) == [0] * 29 + [1]
    body = (await client.get("/api/v1/account", headers=account.headers())).json()
    assert body["balance"]["total"] == 24
