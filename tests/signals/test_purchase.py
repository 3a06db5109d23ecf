"""POST /signals/{id}/purchase (D9): a reveal of the signal's contact at the tier price, with every
reveal rule — suppression (451), charge once, the ledger, idempotency, credit headers; fcra_blocked
→ 451 and nothing said about the contact; unknown → 404; Read Only keys → 403; exact under
concurrency."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.factories import Factory, details
from tests.signals.support import event, ingest
from vpx.models import LedgerEntry, Reveal

pytestmark = pytest.mark.asyncio

HOT = {"budget": "$9k", "timeline": "Q1", "vendor_evaluation": ["A"]}
WARM = {"timeline": "Q2"}


def _url(signal_id: str) -> str:
    return f"/api/v1/signals/{signal_id}/purchase"


async def test_purchase_reveals_the_contact_at_its_tier_price(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    contact = await factory.contact()
    [signal] = (await ingest(app, [event(contact_id=contact, business=None, evidence=WARM)])).signal_ids
    account = await factory.account(credits=10)  # 25 free + 10
    response = await client.post(_url(signal), headers=account.headers("live"))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["signal"]["id"] == signal and body["signal"]["reveal_cost"] == 3
    assert body["contact"]["id"] == contact and body["contact"]["phone"] == "+13035550100"
    assert body["contact"]["credits_charged"] == 3 and body["contact"]["credits_remaining"] == 32
    assert response.headers["X-Credits-Charged"] == "3" and response.headers["X-Credits-Remaining"] == "32"
    # D10: buying again (or revealing the contact) costs nothing.
    again = await client.post(_url(signal), headers=account.headers("full"))
    assert again.status_code == 200 and again.headers["X-Credits-Charged"] == "0"
    reveal = await client.post(f"/api/v1/contacts/{contact}/reveal", headers=account.headers("live"))
    assert reveal.json()["credits_charged"] == 0
    async with factory.database.read_sessions() as session:
        entries = list(await session.scalars(select(LedgerEntry).where(LedgerEntry.account_id == account.id)))
        channel = await session.scalar(select(Reveal.channel))
    assert [e.kind for e in entries if e.amount < 0] == ["reveal"]
    assert channel == "purchase"


async def test_price_follows_the_contacts_highest_live_signal(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    contact = await factory.contact()
    [cold] = (await ingest(app, [event(contact_id=contact, business=None, source_record_id="c")])).signal_ids
    await ingest(app, [event(contact_id=contact, business=None, evidence=HOT, source_record_id="h")])
    account = await factory.account()
    response = await client.post(_url(cold), headers=account.headers("live"))
    # A purchase reveals the contact at the contact's price: its hottest signal sets it (D9).
    assert response.json()["signal"]["intent_level"] == "cold" and response.headers["X-Credits-Charged"] == "6"


async def test_fcra_blocked_signal_is_451_and_charges_nothing(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    contact = await factory.contact()
    evidence = {**HOT, "credit_history": "poor"}
    [signal] = (await ingest(app, [event(contact_id=contact, business=None, evidence=evidence)])).signal_ids
    account = await factory.account()
    response = await client.post(_url(signal), headers=account.headers("live"))
    assert response.status_code == 451
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "fcra_blocked"
    assert contact not in response.text and "Acme" not in response.text
    balance = (await client.get("/api/v1/account", headers=account.headers())).json()["balance"]
    assert balance["total"] == 25


async def test_suppressed_contact_is_451_and_charges_nothing(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    contact = await factory.contact()
    [signal] = (await ingest(app, [event(contact_id=contact, business=None)])).signal_ids
    await factory.suppress("phone", "+13035550100")
    account = await factory.account()
    response = await client.post(_url(signal), headers=account.headers("live"))
    assert response.status_code == 451 and response.json()["code"] == "suppressed"
    balance = (await client.get("/api/v1/account", headers=account.headers())).json()["balance"]
    assert balance["total"] == 25


async def test_unknown_signal_is_404_and_read_only_keys_403(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    missing = await client.post(_url("sg_nosuchsignal"), headers=account.headers("live"))
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    [signal] = (await ingest(app, [event()])).signal_ids
    refused = await client.post(_url(signal), headers=account.headers("ro"))
    assert refused.status_code == 403 and refused.json()["code"] == "insufficient_permission"


async def test_not_enough_credits_is_402(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    contact = await factory.contact()
    [signal] = (await ingest(app, [event(contact_id=contact, business=None, evidence=HOT)])).signal_ids
    account = await factory.account()
    others = await factory.contacts(
        [
            {"business_name": f"Spend Co {i}", "city": "Austin", "state": "TX", "industry": "saas"} | details(i)
            for i in range(21)
        ]
    )
    for other in others:
        assert (await client.post(f"/api/v1/contacts/{other}/reveal", headers=account.headers())).status_code == 200
    response = await client.post(_url(signal), headers=account.headers("live"))
    assert response.status_code == 402 and response.json()["code"] == "insufficient_credits"


async def test_idempotency_key_replays_the_first_answer(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    contact = await factory.contact()
    [signal] = (await ingest(app, [event(contact_id=contact, business=None, evidence=HOT)])).signal_ids
    account = await factory.account()
    headers = account.headers("live") | {"Idempotency-Key": "buy-1"}
    first = await client.post(_url(signal), headers=headers)
    second = await client.post(_url(signal), headers=headers)
    assert first.status_code == second.status_code == 200
    assert second.json() == first.json() and second.headers["X-Credits-Charged"] == "6"
    balance = (await client.get("/api/v1/account", headers=account.headers())).json()["balance"]
    assert balance["total"] == 19


async def test_concurrent_purchases_charge_exactly(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    # 40 contacts with a warm signal each (3 credits), 30 credits to spend: exactly 10 purchases succeed.
    contacts = await factory.contacts(
        [
            {"business_name": f"Race Co {i}", "city": "Austin", "state": "TX", "industry": "saas"} | details(i)
            for i in range(40)
        ]
    )
    report = await ingest(
        app,
        [event(contact_id=c, business=None, evidence=WARM, source_record_id=c) for c in contacts]
        + [event(contact_id=contacts[0], business=None, evidence=WARM, source_record_id="dup")],
    )
    account = await factory.account(credits=5)  # 25 free + 5
    signals = report.signal_ids
    responses = await asyncio.gather(
        *(client.post(_url(s), headers=account.headers("live")) for s in signals[:40] + [signals[40]] * 5)
    )
    statuses = [r.status_code for r in responses]
    assert statuses.count(200) + statuses.count(402) == len(responses)
    charged = sum(Decimal(r.headers["X-Credits-Charged"]) for r in responses if r.status_code == 200)
    assert charged == 30
    async with factory.database.read_sessions() as session:
        total = await session.scalar(select(func.sum(LedgerEntry.amount)).where(LedgerEntry.account_id == account.id))
        reveals = await session.scalar(select(func.count()).select_from(Reveal))
    assert Decimal(total or 0) == 0 and reveals == 10
