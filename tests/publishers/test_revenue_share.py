"""D17 revenue share: 30 % of what other accounts pay, exact to the cent and beyond, as ledger entries in
the reveal's transaction; nothing for the publisher's own reveals; no deadlock when two accounts reveal
each other's contributions at once (D11: balances exact under concurrency)."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.factories import Factory
from vpx.models import LedgerEntry

pytestmark = pytest.mark.asyncio


async def contributed(client: httpx.AsyncClient, headers: dict[str, str], names: list[str], area: str) -> list[str]:
    rows = [
        {"business_name": n, "phone": f"+1{area}555{i:04d}", "city": "Austin", "state": "TX", "industry": "legal"}
        # Every paid field, so that a reveal costs the whole 1 credit.
        | {"email": f"office{i}@firm{area}.example", "website": f"https://firm{i}.example", "street": f"{i} Elm St"}
        for i, n in enumerate(names, start=100)
    ]
    response = await client.post("/api/v1/contacts/contribute", json={"contacts": rows}, headers=headers)
    results = response.json()["results"]
    assert all(r["status"] == "accepted" for r in results), results
    return [r["contact_id"] for r in results]


async def entries(app: FastAPI, account_id: str, kind: str) -> list[LedgerEntry]:
    async with app.state.database.read_sessions() as session:
        rows = await session.scalars(
            select(LedgerEntry)
            .where(LedgerEntry.account_id == account_id, LedgerEntry.kind == kind)
            .order_by(LedgerEntry.id)
        )
        return list(rows)


async def test_revenue_share_is_exact_and_in_the_ledger(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    publisher, buyer = await factory.account(), await factory.account(credits=10)
    plain, warm, hot = await contributed(client, publisher.headers(), ["Plain Law", "Warm Law", "Hot Law"], "512")
    await factory.set_intent(warm, "warm")
    await factory.set_intent(hot, "hot")
    for contact in (plain, warm, hot):
        assert (await client.post(f"/api/v1/contacts/{contact}/reveal", headers=buyer.headers())).status_code == 200
    await client.post(f"/api/v1/contacts/{hot}/reveal", headers=buyer.headers())  # charge once: no second share
    await client.post(f"/api/v1/contacts/{plain}/reveal", headers=publisher.headers())  # own contribution: no share

    shares = await entries(app, publisher.id, "revenue_share")
    assert [(e.reference, e.amount) for e in shares] == [
        (plain, Decimal("0.3")),
        (warm, Decimal("0.9")),
        (hot, Decimal("1.8")),
    ]
    assert [e.balance_after for e in shares] == [Decimal("25.3"), Decimal("26.2"), Decimal("28.0")]
    account = (await client.get("/api/v1/account", headers=publisher.headers())).json()
    assert account["balance"] == {"total": 27.0, "free": 24, "paid": 3}  # 25 + 3 shared - 1 own reveal
    earnings = (await client.get("/api/v1/publisher/earnings", headers=publisher.headers())).json()
    assert earnings == {
        "revenue_share_percent": 30,
        "total_earned": 3,
        "paid_reveals": 3,
        "contributed_contacts": 3,
        "months": [{"month": "2026-11", "earned": 3, "paid_reveals": 3}],
    }
    page = (await client.get("/api/v1/publisher/contributions", headers=publisher.headers())).json()
    assert [(c["contact_id"], c["paid_reveals"], c["earned"]) for c in page["contributions"]] == [
        (hot, 1, 1.8),
        (warm, 1, 0.9),
        (plain, 1, 0.3),
    ]


async def test_crossed_reveals_at_once_do_not_deadlock_and_add_up(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    """Two accounts each reveal the other's contributions, many at once, singly and in batches."""
    one, two = await factory.account(credits=100), await factory.account(credits=100)
    ones = await contributed(client, one.headers(), [f"One Firm {i}" for i in range(12)], "214")
    twos = await contributed(client, two.headers(), [f"Two Firm {i}" for i in range(12)], "972")
    requests = []
    for a, b in zip(ones[:8], twos[:8], strict=True):
        requests.append(client.post(f"/api/v1/contacts/{b}/reveal", headers=one.headers()))
        requests.append(client.post(f"/api/v1/contacts/{a}/reveal", headers=two.headers()))
    requests.append(client.post("/api/v1/contacts/batch-reveal", json={"contact_ids": twos[4:]}, headers=one.headers()))
    requests.append(client.post("/api/v1/contacts/batch-reveal", json={"contact_ids": ones[4:]}, headers=two.headers()))
    responses = await asyncio.gather(*requests)
    assert all(r.status_code == 200 for r in responses), [r.text for r in responses if r.status_code != 200]
    for account in (one, two):
        # 125 to start, 12 reveals at 1 credit, 12 shares of 0.3 from the other account.
        body = (await client.get("/api/v1/account", headers=account.headers())).json()
        assert body["balance"]["total"] == 125 - 12 + 3.6
        assert len(await entries(app, account.id, "revenue_share")) == 12
        assert len(await entries(app, account.id, "reveal")) == 12
