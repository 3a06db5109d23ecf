"""Test mode against live mode, both ways: what one mode writes (reveals, ledger, auto-buy rules, webhook
subscriptions and their events, exports, purchases) and what it holds (catalogue, signals) is never seen,
spent or counted by the other; events say their mode (``livemode``)."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import select

from tests.factories import Factory, details
from tests.sandbox.conftest import test_keys
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import payload
from vpx.demo import signals as demo_signals
from vpx.models import LedgerEntry, Signal
from vpx.webhooks.sender import WebhookSender
from vpx.worker.deliveries import deliver_due


async def _ledger(client: httpx.AsyncClient, headers: dict[str, str]) -> list[dict[str, Any]]:
    response = await client.get("/api/v1/account/ledger", headers=headers)
    assert response.status_code == 200, response.text
    entries: list[dict[str, Any]] = response.json()["entries"]
    return entries


async def _balance(client: httpx.AsyncClient, headers: dict[str, str]) -> Decimal:
    response = await client.get("/api/v1/account", headers=headers)
    assert response.status_code == 200, response.text
    return Decimal(str(response.json()["balance"]["total"]))


async def _deliver(app: FastAPI, *, sandbox: bool) -> int:
    """One worker round on one mode's database (the sandbox's own worker does this in a server)."""
    database = app.state.sandbox.database if sandbox else app.state.database
    settings = app.state.sandbox.settings if sandbox else app.state.settings
    sender = WebhookSender()
    try:
        return await deliver_due(
            database,
            box=app.state.secrets,
            sender=sender,
            settings=settings,
            clock=app.state.clock,
            resolver=app.state.webhook_resolver,
            worker_id="test-worker",
        )
    finally:
        await sender.close()


def _csv(response: httpx.Response) -> list[dict[str, str]]:
    assert response.status_code == 200, response.text
    return list(csv.DictReader(io.StringIO(response.content.decode("utf-8"), newline="")))


async def test_nothing_one_mode_writes_reaches_the_other(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver
) -> None:
    account = await factory.account(credits=20)
    keys = await test_keys(client, account)
    test, live = {"X-API-Key": keys["full"]}, account.headers("full")
    real = await factory.contact(business_name="Leakproof Plumbing Co", **details(7001))
    sandboxed = (await client.get("/api/v1/contacts/search", params={"q": "dental"}, headers=test)).json()
    fake = sandboxed["contacts"][0]["id"]
    live_start, test_start = await _balance(client, live), await _balance(client, test)

    # Live mode's work: a reveal, a webhook, an auto-buy rule.
    assert (await client.post("/api/v1/contacts/reveal", json={"contact_id": real}, headers=live)).status_code == 200
    live_hook = await client.post(
        "/api/v1/webhooks", json={"url": receiver.url("/live"), "events": ["contact.revealed"]}, headers=live
    )
    assert live_hook.status_code == 201, live_hook.text
    assert live_hook.json()["livemode"] is True
    rule = {"name": "live rule", "industries": ["home-services"], "states": ["TX"], "min_confidence": 0.5}
    assert (await client.post("/api/v1/buyer/auto-buy/rules", json=rule, headers=live)).status_code == 201
    # Test mode's work: the same.
    assert (await client.post("/api/v1/contacts/reveal", json={"contact_id": fake}, headers=test)).status_code == 200
    test_hook = await client.post(
        "/api/v1/webhooks", json={"url": receiver.url("/test"), "events": ["contact.revealed"]}, headers=test
    )
    assert test_hook.status_code == 201, test_hook.text
    assert test_hook.json()["livemode"] is False
    rule = {"name": "test rule", "industries": ["dental"], "states": ["CA"], "min_confidence": 0.5}
    assert (await client.post("/api/v1/buyer/auto-buy/rules", json=rule, headers=test)).status_code == 201

    # Balances: each mode spent its own only.
    live_now, test_now = await _balance(client, live), await _balance(client, test)
    assert live_now < live_start and test_now < test_start
    # Ledgers: each mode's reveal is in its own ledger only.
    live_ledger, test_ledger = await _ledger(client, live), await _ledger(client, test)
    assert [e["reference"] for e in live_ledger if e["kind"] == "reveal"] == [real]
    assert [e["reference"] for e in test_ledger if e["kind"] == "reveal"] == [fake]
    assert "Test credits" in {e["description"] for e in test_ledger}
    assert "Test credits" not in {e["description"] for e in live_ledger}
    # Subscriptions and rules: each mode lists its own.
    live_hooks = (await client.get("/api/v1/webhooks", headers=live)).json()["webhooks"]
    test_hooks = (await client.get("/api/v1/webhooks", headers=test)).json()["webhooks"]
    assert [h["id"] for h in live_hooks] == [live_hook.json()["id"]]
    assert [h["id"] for h in test_hooks] == [test_hook.json()["id"]]
    assert (await client.get(f"/api/v1/webhooks/{test_hook.json()['id']}", headers=live)).status_code == 404
    live_rules = (await client.get("/api/v1/buyer/auto-buy/rules", headers=live)).json()["rules"]
    test_rules = (await client.get("/api/v1/buyer/auto-buy/rules", headers=test)).json()["rules"]
    assert [r["name"] for r in live_rules] == ["live rule"] and [r["name"] for r in test_rules] == ["test rule"]
    # Exports: each mode's revealed contacts only.
    live_csv = _csv(await client.get("/api/v1/exports/contacts.csv", headers=live))
    test_csv = _csv(await client.get("/api/v1/exports/contacts.csv", headers=test))
    assert [row["id"] for row in live_csv] == [real] and [row["id"] for row in test_csv] == [fake]
    assert test_csv[0]["email"].endswith(".example")
    # The real contact is a preview (or absent) to the test key, whatever its id is in the sandbox.
    seen = await client.get(f"/api/v1/contacts/{real}", headers=test)
    assert seen.status_code == 404 or seen.json()["business_name"] != "Leakproof Plumbing Co"

    # Webhooks: each mode's events go to its own subscriptions, saying their mode.
    await client.post(f"/api/v1/webhooks/{live_hook.json()['id']}/test", headers=live)
    await client.post(f"/api/v1/webhooks/{test_hook.json()['id']}/test", headers=test)
    assert await _deliver(app, sandbox=False) >= 1
    assert await _deliver(app, sandbox=True) >= 1
    live_events = [payload(r.body) for r in await receiver.wait_for(1, path="/live")]
    test_events = [payload(r.body) for r in await receiver.wait_for(1, path="/test")]
    assert live_events and {e["livemode"] for e in live_events} == {True}
    assert test_events and {e["livemode"] for e in test_events} == {False}
    assert {e["data"].get("webhook_id") for e in test_events if e["type"] == "webhook.test"} == {test_hook.json()["id"]}
    # The main database holds no entry of test mode, the sandbox none of live mode.
    async with app.state.database.read_sessions() as session:
        kinds = set(await session.scalars(select(LedgerEntry.description).where(LedgerEntry.account_id == account.id)))
    assert "Test credits" not in kinds
    async with app.state.sandbox.database.read_sessions() as session:
        references = set(
            await session.scalars(select(LedgerEntry.reference).where(LedgerEntry.account_id == account.id))
        )
    assert real not in references or real == fake


async def test_signals_of_each_mode_are_its_own(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account(credits=20)
    keys = await test_keys(client, account)
    test, live = {"X-API-Key": keys["live"]}, account.headers("live")
    await factory.demo(count=300)
    await demo_signals.load_demo_signals(
        app.state.database, count=40, seed=7, now=app.state.clock.now(), settings=app.state.settings
    )
    async with app.state.database.read_sessions() as session:
        live_ids = set(await session.scalars(select(Signal.id)))
    async with app.state.sandbox.database.read_sessions() as session:
        sandbox_ids = set(await session.scalars(select(Signal.id)))
    assert live_ids and sandbox_ids

    async def listed(headers: dict[str, str]) -> set[str]:
        response = await client.get(
            "/api/v1/signals", params={"limit": 100, "since": "2000-01-01T00:00:00Z"}, headers=headers
        )
        assert response.status_code == 200, response.text
        return {s["id"] for s in response.json()["signals"]}

    seen_live, seen_test = await listed(live), await listed(test)
    assert seen_live and seen_live <= live_ids and not (seen_live - live_ids)
    assert seen_test and seen_test <= sandbox_ids
    assert not (seen_test & (live_ids - sandbox_ids)) and not (seen_live & (sandbox_ids - live_ids))

    # A test purchase spends the test balance only.
    live_before = await _balance(client, live)
    signal_id = sorted(seen_test - live_ids)[0]
    bought = await client.post(f"/api/v1/signals/{signal_id}/purchase", headers=test)
    assert bought.status_code == 200, bought.text
    assert Decimal(bought.headers["X-Credits-Charged"]) >= 0
    assert await _balance(client, live) == live_before
    assert (await client.post(f"/api/v1/signals/{signal_id}/purchase", headers=live)).status_code == 404
