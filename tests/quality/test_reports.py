"""Buyers' reports on wrong fields: two accounts' reports of the same value refund both reporters (and
whoever reports it later) and tell every buyer once; one report alone refunds nothing; a report on a
contact the account did not reveal is a 403; the same report twice answers the same and writes
nothing; a refund never exceeds what the reveal cost; bad input is a 422 problem."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import update

from tests.factories import Factory
from tests.quality.support import (
    balance,
    buyer,
    corrected,
    ledger_total,
    refund_rows,
    refunds,
    report,
    report_count,
    reveal,
)
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliver_round
from vpx.models import Contact

pytestmark = pytest.mark.asyncio
NOTE = "Called on 2026-11-14: the number belongs to a pizzeria on Elm St"


async def test_two_accounts_reporting_one_field_refund_both_and_tell_every_buyer(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver
) -> None:
    first, second, third, onlooker = [await buyer(client, factory, receiver, n) for n in ("a", "b", "c", "d")]
    contact = await factory.contact()  # phone, email, website, address: 1 credit, a quarter each
    for account in (first, second, third, onlooker):
        await reveal(client, account, contact)

    opened = await report(client, first, contact, "phone", "disconnected", note=NOTE)
    assert opened["status"] == "open" and opened["credits_refunded"] == 0 and opened["note"] == NOTE
    assert opened["id"].startswith("rpt_") and opened["contact_id"] == contact
    assert await refunds(client, first) == []

    confirmed = await report(client, second, contact, "phone", "wrong")
    assert confirmed["status"] == "confirmed" and confirmed["credits_refunded"] == 0.25
    again = await report(client, first, contact, "phone", "disconnected", note=NOTE)
    assert again["status"] == "confirmed" and again["credits_refunded"] == 0.25 and again["resolved_at"]
    for account in (first, second):
        [entry] = await refunds(client, account)
        assert entry["amount"] == 0.25 and entry["reference"] == contact
        assert "phone" in entry["description"] and contact in entry["description"]
        assert "more than one buyer" in entry["description"]
        assert await balance(client, account) == Decimal("124.25")  # 25 free + 100 - 1 + 0.25

    # The field is bad now: a later reporter of the same value is refunded at once.
    late = await report(client, third, contact, "phone", "wrong")
    assert late["status"] == "confirmed" and late["credits_refunded"] == 0.25
    assert await refunds(client, onlooker) == []

    await deliver_round(app)
    for name in ("a", "b", "c", "d"):
        [event] = corrected(receiver, f"/{name}")
        assert event["data"]["contact_id"] == contact and event["data"]["fields"] == ["phone"]
        assert event["data"]["change"] == "marked_bad" and event["data"]["reason"] == "disconnected"
        assert set(event["data"]) == {"contact_id", "fields", "change", "reason", "corrected_at"}
    assert all(b"pizzeria" not in r.body for r in receiver.received())
    for account in (first, second, third, onlooker):
        assert await ledger_total(app, account.id) == await balance(client, account)


async def test_one_report_alone_refunds_nothing(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await buyer(client, factory)
    contact = await factory.contact()
    await reveal(client, account, contact)
    assert (await report(client, account, contact, "website", "closed_business"))["status"] == "open"
    assert await refunds(client, account) == []


async def test_a_report_on_a_contact_not_revealed_is_refused(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await buyer(client, factory)
    contact = await factory.contact()
    refused = await report(client, account, contact, status=403)
    assert refused["code"] == "not_revealed" and refused["status"] == 403 and contact in refused["detail"]
    assert (await report(client, account, "ct_999999", status=404))["code"] == "not_found"
    assert (await report(client, account, "nonsense", status=404))["code"] == "not_found"
    assert await report_count(app) == 0


async def test_the_same_report_twice_answers_the_same_and_writes_nothing_more(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await buyer(client, factory)
    contact = await factory.contact()
    await reveal(client, account, contact)
    first = await report(client, account, contact, "email", "wrong", note="bounced from my own mail client")
    repeated = await report(client, account, contact, "email", "wrong", note="bounced from my own mail client")
    assert repeated == first
    # Another problem or note on the same field is the same report: the first stands.
    assert await report(client, account, contact, "email", "disconnected") == first
    assert await report_count(app) == 1
    assert await refunds(client, account) == [] and await refund_rows(app) == []


async def test_a_refund_never_exceeds_what_the_reveal_cost(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    first, second = await buyer(client, factory), await buyer(client, factory)
    # Only a phone: a quarter of the price, all of it the phone's share.
    contact = await factory.contact(email=None, website=None, street=None)
    for account in (first, second):
        await reveal(client, account, contact)
        await report(client, account, contact, "phone", "wrong")
    for account in (first, second):
        assert [e["amount"] for e in await refunds(client, account)] == [0.25]
    # A registry fills in an email later: it was not part of those reveals, so nothing to report or refund.
    async with app.state.database.write_sessions() as session, session.begin():
        await session.execute(
            update(Contact).where(Contact.id == int(contact.removeprefix("ct_"))).values(email="x@example.com")
        )
    for account in (first, second):
        refused = await report(client, account, contact, "email", "wrong", status=422)
        assert "did not include its email" in refused["detail"]
        assert [e["amount"] for e in await refunds(client, account)] == [0.25]
        assert await ledger_total(app, account.id) == await balance(client, account)


async def test_a_warm_contact_refunds_its_share_of_the_higher_price(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    first, second = await buyer(client, factory), await buyer(client, factory)
    contact = await factory.contact(website=None)  # phone, email, address: three quarters of 3 credits
    await factory.set_intent(contact, "warm")
    for account in (first, second):
        await reveal(client, account, contact)
        await report(client, account, contact, "address", "wrong")
    for account in (first, second):
        assert [e["amount"] for e in await refunds(client, account)] == [0.75]


async def test_bad_reports_are_problems(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await buyer(client, factory)
    contact = await factory.contact(website=None)
    await reveal(client, account, contact)
    for body, field in (
        ({"field": "fax", "problem": "wrong"}, "field"),
        ({"field": "phone", "problem": "rude"}, "problem"),
        ({"field": "phone"}, "problem"),
        ({"field": "phone", "problem": "wrong", "note": "x" * 501}, "note"),
        ({"field": "phone", "problem": "wrong", "extra": 1}, "extra"),
    ):
        response = await client.post(f"/api/v1/contacts/{contact}/report", json=body, headers=account.headers())
        assert response.status_code == 422, response.text
        assert response.json()["code"] == "invalid_parameters"
        assert field in {e["field"] for e in response.json()["errors"]}
    nothing = await report(client, account, contact, "website", status=422)
    assert nothing["code"] == "invalid_parameters" and "no website" in nothing["detail"]
    read_only = await report(client, account, contact, key_type="ro", status=403)
    assert read_only["code"] == "insufficient_permission"
    malformed = await client.post(
        f"/api/v1/contacts/{contact}/report",
        content=b"{",
        headers={**account.headers(), "content-type": "application/json"},
    )
    assert malformed.status_code == 400
