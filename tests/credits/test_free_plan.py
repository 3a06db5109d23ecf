"""D8 and D11: 25 free credits each UTC month that do not carry over, granted credits that do, and a
ledger whose entries always sum to the balance."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import httpx

from tests.factories import Factory, details


async def ledger(client: httpx.AsyncClient, headers: dict[str, str]) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = []
    cursor = None
    while True:
        params: dict[str, str | int] = {"limit": 2}
        if cursor:
            params["cursor"] = cursor
        page = (await client.get("/api/v1/account/ledger", params=params, headers=headers)).json()
        entries += page["entries"]
        cursor = page["next_cursor"]
        if not cursor:
            return entries


async def test_new_account_starts_with_25_free_credits(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    body = (await client.get("/api/v1/account", headers=account.headers("ro"))).json()
    assert body["plan"] == "free"
    assert body["balance"] == {"total": 25, "free": 25, "paid": 0}
    assert body["free_credits_monthly"] == 25
    assert body["next_free_reset"] == "2026-12-01T00:00:00Z"
    assert body["active_keys"] == 3 and body["max_active_keys"] == 5


async def test_free_credits_reset_at_the_month_boundary(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account(credits=10)
    contacts = [await factory.contact(business_name=f"Shop {i}", **details(i)) for i in range(5)]
    for contact in contacts[:3]:
        await client.post(f"/api/v1/contacts/{contact}/reveal", headers=account.headers())
    before = (await client.get("/api/v1/account", headers=account.headers())).json()["balance"]
    assert before == {"total": 32, "free": 22, "paid": 10}

    factory.clock.set(datetime(2026, 11, 30, 23, 59, 59, tzinfo=UTC))
    assert (await client.get("/api/v1/account", headers=account.headers())).json()["balance"]["free"] == 22
    factory.clock.set(datetime(2026, 12, 1, 0, 0, 0, tzinfo=UTC))
    after = (await client.get("/api/v1/account", headers=account.headers())).json()
    assert after["balance"] == {"total": 35, "free": 25, "paid": 10}  # 22 unused expired, 25 new
    assert after["next_free_reset"] == "2027-01-01T00:00:00Z"

    await client.post(f"/api/v1/contacts/{contacts[3]}/reveal", headers=account.headers())
    entries = await ledger(client, account.headers())
    assert [e["kind"] for e in entries] == [
        "reveal",
        "free_monthly",
        "reveal",
        "reveal",
        "reveal",
        "grant",
        "free_monthly",
    ]
    assert entries[1]["amount"] == 3  # net change: 25 granted, 22 expired
    assert "22 unused expired" in str(entries[1]["description"])


async def test_ledger_sums_to_the_balance_and_each_entry_shows_the_balance_after(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account(credits=Decimal("7.5"))
    contacts = [await factory.contact(business_name=f"Firm {i}", **details(i)) for i in range(4)]
    await factory.set_intent(contacts[0], "warm")
    for contact in contacts:
        await client.post(f"/api/v1/contacts/{contact}/reveal", headers=account.headers())
    entries = await ledger(client, account.headers())
    balance = (await client.get("/api/v1/account", headers=account.headers())).json()["balance"]["total"]
    assert sum(Decimal(str(e["amount"])) for e in entries) == Decimal(str(balance)) == Decimal("26.5")
    running = Decimal(0)
    for entry in reversed(entries):
        running += Decimal(str(entry["amount"]))
        assert Decimal(str(entry["balance_after"])) == running
    ids = [e["id"] for e in entries]
    assert len(ids) == len(set(ids))


async def test_bad_cursor_is_422(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    response = await client.get("/api/v1/account/ledger", params={"cursor": "garbage!"}, headers=account.headers())
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "cursor"
