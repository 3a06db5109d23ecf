"""Refunds that give nothing away (docs/decisions.md, "Refunds when data proves wrong"): reports of
accounts that never paid, or that share a network or an owner's domain, confirm nothing; a refund goes
back to the pool the reveal was paid from (free credits stay free and expire with their month); the
rules refund an account at most the monthly limit (the operator is not limited); a value found bad is
no longer sold (not shown, not charged for) until a registry replaces it. The outside probe's loop (two
free accounts, seven contacts, four fields each) ends with every credit spent and none created."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import update

from tests import factories
from tests.factories import Factory
from tests.quality.support import ADMIN_TOKEN, buyer, ledger_total, refunds, report, reveal
from vpx.clock import FixedClock
from vpx.models import Account, Contact

pytestmark = pytest.mark.asyncio
FIELDS = ("phone", "email", "website", "address")
ADMIN = {"X-Admin-Token": ADMIN_TOKEN}


async def account_balance(client: httpx.AsyncClient, account: factories.TestAccount) -> dict[str, Any]:
    response = await client.get("/api/v1/account", headers=account.headers("ro"))
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()["balance"]
    return found


async def preview(client: httpx.AsyncClient, account: factories.TestAccount, contact: str) -> dict[str, Any]:
    response = await client.get(f"/api/v1/contacts/{contact}", headers=account.headers())
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


async def test_the_probes_loop_two_free_accounts_pay_full_price_and_create_no_paid_credits(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    # D8: 25 free credits each, nothing ever bought; each from a network of its own.
    first, second = await factory.account(name="free one"), await factory.account(name="free two")
    contacts = [await factory.contact(phone=f"+1303555020{i}", business_name=f"Probe Co {i}") for i in range(7)]
    for contact in contacts:
        for account in (first, second):
            await reveal(client, account, contact)
        for account in (first, second):
            for field in FIELDS:
                answered = await report(client, account, contact, field, "wrong")
                # Two free sign-ups agreeing prove nothing: they wait for the operator.
                assert answered["status"] == "open" and answered["credits_refunded"] == 0
    for account in (first, second):
        assert await account_balance(client, account) == {"free": 18, "paid": 0, "total": 18}
        assert await refunds(client, account) == []
        assert await ledger_total(app, account.id) == 18
    # Nothing was found bad, so the contacts sell at their price as before.
    assert (await preview(client, await buyer(client, factory), contacts[0]))["reveal_cost"] == 1


async def test_paying_accounts_of_one_network_or_one_domain_do_not_confirm_each_other(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    office = "2001:db8:77::10"
    same_network = [await buyer(client, factory, name=f"office {i}") for i in range(2)]
    colleagues = [
        await factory.account(credits=100, name=f"colleague {i}", email=f"buyer{i}@acme-tools.example")
        for i in range(2)
    ]
    outsider = await buyer(client, factory, name="outsider")
    contact = await factory.contact()
    for account in (*same_network, *colleagues, outsider):
        await reveal(client, account, contact)
    for account in same_network:
        assert (await report(client, account, contact, "phone", address=office))["status"] == "open"
    for account in colleagues:  # different networks, one company's email domain
        assert (await report(client, account, contact, "email"))["status"] == "open"
    # A paying account unrelated to them agrees: the value is bad, every reporter refunded.
    assert (await report(client, outsider, contact, "phone"))["status"] == "confirmed"
    assert (await report(client, outsider, contact, "email"))["status"] == "confirmed"
    for account in (*same_network, *colleagues):
        assert [e["amount"] for e in await refunds(client, account)] == [0.25]
    assert [e["amount"] for e in await refunds(client, outsider)] == [0.25, 0.25]


async def test_a_refund_goes_back_to_the_pool_the_reveal_was_paid_from(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, clock: FixedClock
) -> None:
    spender, witness = await buyer(client, factory, name="spender"), await buyer(client, factory, name="witness")
    this_month, last_month = await factory.contact(), await factory.contact(phone="+13035550301")
    # Free credits are spent first (D8): both reveals are paid with free credits.
    for account in (spender, witness):
        await reveal(client, account, this_month)
    assert await account_balance(client, spender) == {"free": 24, "paid": 100, "total": 124}
    await report(client, spender, this_month, "email")
    assert (await report(client, witness, this_month, "email"))["credits_refunded"] == 0.25
    assert await account_balance(client, spender) == {"free": 24.25, "paid": 100, "total": 124.25}
    assert await ledger_total(app, spender.id) == Decimal("124.25")

    # A reveal paid with last month's free credits: those credits have expired, so nothing comes back.
    for account in (spender, witness):
        await reveal(client, account, last_month)
    clock.set(clock.now() + timedelta(days=31))
    await report(client, spender, last_month, "website")
    answered = await report(client, witness, last_month, "website")
    assert answered["status"] == "confirmed" and answered["credits_refunded"] == 0
    assert answered["refund_withheld"] == 0.25 and answered["refund_withheld_reason"] == "free_credits_expired"
    assert [e["amount"] for e in await refunds(client, spender)] == [0.25]
    assert await account_balance(client, spender) == {"free": 25, "paid": 100, "total": 125}  # a new month


async def test_a_reveal_paid_from_both_pools_is_refunded_to_both_in_proportion(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    buyers = [await buyer(client, factory, name=f"buyer {i}") for i in range(2)]
    contact = await factory.contact()
    await factory.set_intent(contact, "hot")  # 6 credits
    async with app.state.database.write_sessions() as session, session.begin():
        # Two free credits left this month: the reveal takes them, and 4 carried-over ones.
        await session.execute(update(Account).where(Account.id.in_([b.id for b in buyers])).values(free_credits=2))
    for account in buyers:
        await reveal(client, account, contact)
        assert await account_balance(client, account) == {"free": 0, "paid": 96, "total": 96}
    for account in buyers:
        await report(client, account, contact, "phone")
    for account in buyers:
        # The phone's share is 1.5: a third of it (2 of 6 were free credits) back to free credits.
        assert [e["amount"] for e in await refunds(client, account)] == [1.5]
        assert await account_balance(client, account) == {"free": 0.5, "paid": 97, "total": 97.5}


async def test_the_rules_refund_at_most_the_monthly_limit(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    app.state.settings.refund_monthly_cap = Decimal("0.5")
    greedy, witness = await buyer(client, factory, name="greedy"), await buyer(client, factory, name="witness")
    contact = await factory.contact()
    for account in (greedy, witness):
        await reveal(client, account, contact)
    for field in ("phone", "email", "website"):
        await report(client, greedy, contact, field)
    answers = [await report(client, witness, contact, field) for field in ("phone", "email", "website")]
    assert [a["credits_refunded"] for a in answers] == [0.25, 0.25, 0]
    assert answers[2]["refund_withheld"] == 0.25 and answers[2]["refund_withheld_reason"] == "monthly_limit"
    assert [e["amount"] for e in await refunds(client, greedy)] == [0.25, 0.25]
    # The operator's own decision is not limited.
    opened = await report(client, greedy, contact, "address")
    confirmed = await client.post(f"/api/v1/admin/reports/{opened['id']}/confirm", headers=ADMIN, json={})
    assert confirmed.status_code == 200, confirmed.text
    assert confirmed.json()["credits_refunded"] == 0.25
    assert [e["amount"] for e in await refunds(client, greedy)] == [0.25, 0.25, 0.25]


async def test_a_value_found_bad_is_neither_shown_nor_sold_until_a_registry_replaces_it(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    first, second, later = [await buyer(client, factory, name=n) for n in ("first", "second", "later")]
    contact = await factory.contact()
    shown = await preview(client, later, contact)
    assert shown["reveal_cost"] == 1
    assert (shown["has_phone"], shown["has_email"], shown["has_website"], shown["has_address"]) == (True,) * 4
    for account in (first, second):
        await reveal(client, account, contact)
        await report(client, account, contact, "phone", "disconnected")

    shown = await preview(client, later, contact)
    assert shown["reveal_cost"] == 0.75 and shown["has_phone"] is False and shown["has_email"] is True
    searched = await client.get("/api/v1/contacts/search", params={"q": "acme plumbing"}, headers=later.headers())
    [found] = [c for c in searched.json()["contacts"] if c["id"] == contact]
    assert found["reveal_cost"] == 0.75 and found["has_phone"] is False
    bought = await client.post(f"/api/v1/contacts/{contact}/reveal", headers=later.headers())
    assert bought.status_code == 200 and bought.headers["X-Credits-Charged"] == "0.75"
    assert bought.json()["phone"] is None and bought.json()["bad_fields"] == ["phone"]
    refused = await report(client, later, contact, "phone", status=422)
    assert "did not include its phone" in refused["detail"]
    # Earlier buyers see it withheld too, and why.
    again = await preview(client, first, contact)
    assert again["phone"] is None and again["bad_fields"] == ["phone"] and again["email"] is not None

    # A registry's new number is sold again (the mark was for the old value).
    async with app.state.database.write_sessions() as session, session.begin():
        await session.execute(
            update(Contact).where(Contact.id == int(contact.removeprefix("ct_"))).values(phone="+13035550999")
        )
    shown = await preview(client, await buyer(client, factory, name="newest"), contact)
    assert shown["reveal_cost"] == 1 and shown["has_phone"] is True
    assert (await preview(client, first, contact))["phone"] == "+13035550999"


async def test_a_contact_sells_only_the_fields_it_has(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await buyer(client, factory)
    bare = await factory.contact(phone=None, email=None, website=None, street=None)
    warm = await factory.contact(phone="+13035550777", email=None, street=None)
    await factory.set_intent(warm, "warm")
    shown = await preview(client, account, bare)
    assert shown["reveal_cost"] == 0 and not any(shown[f"has_{f}"] for f in FIELDS)
    assert (await preview(client, account, warm))["reveal_cost"] == 1.5  # two of four fields of 3 credits
    free = await client.post(f"/api/v1/contacts/{bare}/reveal", headers=account.headers())
    assert free.status_code == 200 and free.headers["X-Credits-Charged"] == "0"
    paid = await client.post(f"/api/v1/contacts/{warm}/reveal", headers=account.headers())
    assert paid.headers["X-Credits-Charged"] == "1.5"
    assert (await account_balance(client, account))["total"] == 125 - 1.5
