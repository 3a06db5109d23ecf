"""Matching newly ingested signals (D24): a match buys the contact at the D9 price, charge once (D10),
after the suppression check (D15), never past budget, daily cap (UTC day) or balance; fcra_blocked
and suppressed are never bought; pause, resume and delete; ledger entries, webhook events and the
purchases list."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.autobuy.support import (
    PURCHASES,
    RULES,
    WARM,
    auto_buy_spent,
    create_rule,
    purchases_of,
    signal_for,
)
from tests.factories import Factory, details
from vpx.clock import FixedClock
from vpx.models import LedgerEntry, Reveal

pytestmark = pytest.mark.asyncio

HOT = {"budget": "$9k", "timeline": "Q1", "vendor_evaluation": ["A"]}


async def contacts_in(factory: Factory, count: int, **fields: object) -> list[str]:
    rows = [
        {"business_name": f"Plumber {n}", "city": "Denver", "state": "CO", "industry": "home-services"}
        | details(n) | {"phone": f"+1303555{n:04d}"} | fields
        for n in range(count)
    ]  # fmt: skip
    return await factory.contacts(rows)


async def test_a_matching_signal_buys_its_contact_at_the_tier_price(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    buyer = await factory.account(credits=10)  # 25 free + 10
    rule = await create_rule(client, buyer.headers("full"), name="Warm CO")
    [contact] = await contacts_in(factory, 1)
    signal = await signal_for(app, contact, record="w1", evidence=WARM)
    [purchase] = await purchases_of(app, buyer.id)
    assert purchase.rule_id == rule["id"] and purchase.signal_id == signal and purchase.credits_charged == 3
    account = (await client.get("/api/v1/account", headers=buyer.headers("ro"))).json()
    assert account["balance"]["total"] == 32
    async with app.state.database.read_sessions() as session:
        [entry] = list(
            await session.scalars(select(LedgerEntry).where(LedgerEntry.account_id == buyer.id, LedgerEntry.amount < 0))
        )
        reveal = await session.scalar(select(Reveal).where(Reveal.account_id == buyer.id))
    assert entry.kind == "auto_buy" and entry.amount == -3 and rule["id"] in entry.description
    assert "Warm CO" in entry.description and entry.reference == contact
    assert reveal is not None and reveal.channel == "auto_buy"
    # The account sees the full record now, for free (D10).
    full = await client.get(f"/api/v1/contacts/{contact}", headers=buyer.headers("ro"))
    assert full.json()["phone"] == "+13035550000"
    again = await client.post(f"/api/v1/contacts/{contact}/reveal", headers=buyer.headers("live"))
    assert again.json()["credits_charged"] == 0
    shown = (await client.get(f"{RULES}/{rule['id']}", headers=buyer.headers("full"))).json()
    assert shown["spent_today"] == 3 and shown["spent_total"] == 3
    assert shown["purchases_today"] == 1 and shown["purchases_total"] == 1
    page = (await client.get(PURCHASES, headers=buyer.headers("full"))).json()
    [listed] = page["purchases"]
    assert listed["rule_id"] == rule["id"] and listed["signal_id"] == signal and listed["contact_id"] == contact
    assert listed["credits_charged"] == 3 and listed["signal"]["id"] == signal


async def test_filters_decide_what_matches(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    buyer = await factory.account(credits=100)
    await create_rule(client, buyer.headers("full"), min_confidence=0.9)
    await create_rule(client, buyer.headers("full"), categories=["bant_qualified"])
    await create_rule(client, buyer.headers("full"), intent_levels=["hot"])
    await create_rule(client, buyer.headers("full"), industries=["dental"])
    await create_rule(client, buyer.headers("full"), states=["CA"])
    contacts = await contacts_in(factory, 6)
    await signal_for(app, contacts[0], record="a", confidence=0.5)  # below 0.9; not bant; cold
    assert await purchases_of(app, buyer.id) == []
    await signal_for(app, contacts[1], record="b", confidence=0.95)  # the min_confidence rule
    await signal_for(app, contacts[2], record="c", evidence=HOT, confidence=0.1)  # the hot rule
    bought = await purchases_of(app, buyer.id)
    assert [p.contact_id for p in bought] == [int(contacts[1][3:]), int(contacts[2][3:])]


async def test_each_contact_bought_once_across_rules_and_signals(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    buyer = await factory.account(credits=100)
    await create_rule(client, buyer.headers("full"))
    await create_rule(client, buyer.headers("full"), name="second")
    [contact] = await contacts_in(factory, 1)
    await signal_for(app, contact, record="1")
    await signal_for(app, contact, record="2", evidence=WARM)
    [purchase] = await purchases_of(app, buyer.id)
    assert purchase.credits_charged == 1 and await auto_buy_spent(app, buyer.id) == 1


async def test_other_accounts_rules_buy_for_their_own_account(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    first, second = await factory.account(), await factory.account()
    await create_rule(client, first.headers("full"))
    await create_rule(client, second.headers("full"))
    [contact] = await contacts_in(factory, 1)
    await signal_for(app, contact, record="1")
    assert len(await purchases_of(app, first.id)) == 1 and len(await purchases_of(app, second.id)) == 1
    # One account's purchases are not another's.
    page = (await client.get(PURCHASES, headers=second.headers("full"))).json()
    assert len(page["purchases"]) == 1


async def test_a_rule_with_less_than_a_tier_left_still_buys_a_contact_that_fits(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    """A reveal costs a quarter of its tier's price per field the contact has (issue 39: the prices and
    the words agree): a rule with 0.5 left is not spent, since a cold contact with a phone and an email
    costs 0.5; it pauses when less than a quarter of the cheapest tier is left."""
    buyer = await factory.account(credits=100)
    rule = await create_rule(client, buyer.headers("full"), budget_credits=3.5)
    [warm] = await contacts_in(factory, 1)
    partial = await factory.contact(business_name="Partial Plumbing", phone="+13035559911", website=None, street=None)
    await signal_for(app, warm, record="w", evidence=WARM)  # 3 credits
    shown = (await client.get(f"{RULES}/{rule['id']}", headers=buyer.headers("full"))).json()
    assert (shown["status"], shown["budget_remaining"]) == ("active", 0.5)
    await signal_for(app, partial, record="c")  # cold, a phone and an email: 0.5
    assert [p.credits_charged for p in await purchases_of(app, buyer.id)] == [3, Decimal("0.5")]
    shown = (await client.get(f"{RULES}/{rule['id']}", headers=buyer.headers("full"))).json()
    assert shown["status"] == "paused" and shown["paused_reason"] == (
        "budget spent: 3.5 of 3.5 credits (less than the cheapest contact, 0.25, is left)"
    )


async def test_budget_is_never_exceeded_and_a_spent_rule_pauses_itself(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    buyer = await factory.account(credits=100)
    rule = await create_rule(client, buyer.headers("full"), budget_credits=7)
    contacts = await contacts_in(factory, 4)
    for n, contact in enumerate(contacts[:3]):
        await signal_for(app, contact, record=f"w{n}", evidence=WARM)  # 3 credits each
    # 3 + 3 bought; the third (3 more) would pass 7.
    assert [p.credits_charged for p in await purchases_of(app, buyer.id)] == [3, 3]
    shown = (await client.get(f"{RULES}/{rule['id']}", headers=buyer.headers("full"))).json()
    assert shown["status"] == "active" and shown["budget_remaining"] == 1
    await signal_for(app, contacts[3], record="c")  # a cold contact, 1 credit, still fits
    shown = (await client.get(f"{RULES}/{rule['id']}", headers=buyer.headers("full"))).json()
    assert shown["spent_total"] == 7 and shown["budget_remaining"] == 0
    assert shown["status"] == "paused" and shown["paused_reason"].startswith("budget spent: 7 of 7")
    assert await auto_buy_spent(app, buyer.id) == 7
    resume = await client.post(f"{RULES}/{rule['id']}/resume", headers=buyer.headers("full"))
    assert resume.status_code == 409
    raised = await client.patch(f"{RULES}/{rule['id']}", json={"budget_credits": 10}, headers=buyer.headers("full"))
    assert raised.json()["status"] == "paused"  # raising the budget does not restart it by itself
    resume = await client.post(f"{RULES}/{rule['id']}/resume", headers=buyer.headers("full"))
    assert resume.status_code == 200 and resume.json()["status"] == "active"


async def test_daily_cap_resets_at_the_utc_day_boundary(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, clock: FixedClock
) -> None:
    buyer = await factory.account(credits=100)
    rule = await create_rule(client, buyer.headers("full"), daily_cap=2)
    contacts = await contacts_in(factory, 5)
    clock.set(clock.now().replace(hour=23, minute=59, second=58))
    for n in range(3):
        await signal_for(app, contacts[n], record=f"d1-{n}")
    assert len(await purchases_of(app, buyer.id)) == 2  # the cap
    clock.set(clock.now() + timedelta(seconds=3))  # 00:00:01 UTC the next day
    shown = (await client.get(f"{RULES}/{rule['id']}", headers=buyer.headers("full"))).json()
    assert shown["purchases_today"] == 0 and shown["purchases_total"] == 2
    await signal_for(app, contacts[3], record="d2-0")
    await signal_for(app, contacts[4], record="d2-1")
    assert len(await purchases_of(app, buyer.id)) == 4


async def test_balance_bounds_purchases(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    buyer = await factory.account()  # 25 free credits
    await create_rule(client, buyer.headers("full"))
    contacts = await contacts_in(factory, 10)
    for n, contact in enumerate(contacts):
        await signal_for(app, contact, record=f"h{n}", evidence=HOT)  # 6 credits each
    assert len(await purchases_of(app, buyer.id)) == 4  # 24 of 25
    account = (await client.get("/api/v1/account", headers=buyer.headers("ro"))).json()
    assert account["balance"]["total"] == 1 and await auto_buy_spent(app, buyer.id) == 24


async def test_suppressed_and_fcra_blocked_are_never_bought(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    buyer = await factory.account(credits=100)
    await create_rule(client, buyer.headers("full"))
    suppressed, other = await contacts_in(factory, 2)
    await factory.suppress("phone", "+13035550000")
    await signal_for(app, suppressed, record="s")
    await signal_for(app, other, record="f", evidence={**WARM, "credit_score": 700})
    assert await purchases_of(app, buyer.id) == []
    assert await auto_buy_spent(app, buyer.id) == 0


async def test_pause_stops_purchases_resume_restarts_delete_ends(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    buyer = await factory.account(credits=100)
    full = buyer.headers("full")
    rule = await create_rule(client, full)
    contacts = await contacts_in(factory, 3)
    await client.post(f"{RULES}/{rule['id']}/pause", headers=full)
    await signal_for(app, contacts[0], record="p")
    assert await purchases_of(app, buyer.id) == []
    await client.post(f"{RULES}/{rule['id']}/resume", headers=full)
    await signal_for(app, contacts[1], record="r")
    assert len(await purchases_of(app, buyer.id)) == 1
    await client.delete(f"{RULES}/{rule['id']}", headers=full)
    await signal_for(app, contacts[2], record="d")
    assert len(await purchases_of(app, buyer.id)) == 1
    # A deleted rule's purchases stay listed.
    page = (await client.get(f"{PURCHASES}?rule_id={rule['id']}", headers=full)).json()
    assert len(page["purchases"]) == 1


async def test_a_failed_purchase_never_blocks_the_ingest(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    buyer = await factory.account()
    await create_rule(client, buyer.headers("full"))
    contacts = await contacts_in(factory, 6)
    report = None
    for n, contact in enumerate(contacts):
        await signal_for(app, contact, record=f"x{n}", evidence=HOT)
    async with app.state.database.read_sessions() as session:
        count = len(list(await session.scalars(select(Reveal))))
    assert count == 4 and report is None  # 4 bought; the other 2 signals went in all the same
    assert Decimal(await auto_buy_spent(app, buyer.id)) == 24
