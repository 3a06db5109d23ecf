"""The flows of live mode with a test key, on a small test balance: auto-buy on the sandbox's feed,
idempotency, batch reveal and 402, an enrichment dry run, a report, the reset; live mode never moves."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.factories import Factory
from tests.sandbox.conftest import sandbox_settings, test_keys
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.demo.feed import DemoFeed
from vpx.geography import STATE_CODES
from vpx.models import ContactReport
from vpx.verticals import VERTICALS


async def _ledger(client: httpx.AsyncClient, headers: dict[str, str]) -> list[dict[str, Any]]:
    response = await client.get("/api/v1/account/ledger", headers=headers)
    assert response.status_code == 200, response.text
    entries: list[dict[str, Any]] = response.json()["entries"]
    return entries


async def _balance(client: httpx.AsyncClient, headers: dict[str, str]) -> Decimal:
    response = await client.get("/api/v1/account", headers=headers)
    assert response.status_code == 200, response.text
    return Decimal(str(response.json()["balance"]["total"]))


@pytest.fixture
def settings(database_url: str, sandbox_url: str) -> Settings:
    # A small test balance: the month's 25 free credits and no test credits, so 402 comes soon.
    return sandbox_settings(database_url, sandbox_url, test_credits=0)


async def test_a_test_key_runs_the_live_flows_on_its_balance(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, clock: FixedClock
) -> None:
    account = await factory.account(credits=5)
    keys = await test_keys(client, account)
    test, live = {"X-API-Key": keys["live"]}, account.headers("live")
    live_before, live_ledger = await _balance(client, live), await _ledger(client, live)
    assert await _balance(client, test) == Decimal(25)
    ids: list[str] = []
    for words in ("dental", "plumbing", "roofing", "law", "restaurant", "salon", "clinic"):
        found = await client.get("/api/v1/contacts/search", params={"q": words, "limit": 100}, headers=test)
        ids += [c["id"] for c in found.json()["contacts"] if c["id"] not in ids]
    assert len(ids) >= 30

    # Auto-buy: a rule of test mode buys on the sandbox feed's signals, on the test balance; its
    # signal.created events say livemode false.
    every = {"name": "everything", "industries": list(VERTICALS), "states": sorted(STATE_CODES), "min_confidence": 0}
    made = await client.post("/api/v1/buyer/auto-buy/rules", json=every, headers={"X-API-Key": keys["full"]})
    assert made.status_code == 201, made.text
    clock.set(clock.now() + timedelta(seconds=7))  # a slot of the feed no other test fed
    sandbox = app.state.sandbox
    report = await DemoFeed(sandbox.database, sandbox.settings, clock=clock, interval_seconds=1).feed_once()
    assert report.ingested >= 1
    bought = [e for e in await _ledger(client, test) if e["kind"] == "auto_buy"]
    assert bought, "the test rule bought nothing"
    assert not [e for e in await _ledger(client, live) if e["kind"] == "auto_buy"]
    assert await _balance(client, live) == live_before
    test_start = await _balance(client, test)
    assert test_start == Decimal(25) + sum(Decimal(str(e["amount"])) for e in bought)

    # Idempotency: a repeat answers the same reveal and charges once.
    first = await client.post(
        "/api/v1/contacts/reveal", json={"contact_id": ids[0]}, headers={**test, "Idempotency-Key": "test-1"}
    )
    again = await client.post(
        "/api/v1/contacts/reveal", json={"contact_id": ids[0]}, headers={**test, "Idempotency-Key": "test-1"}
    )
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json()
    charged = Decimal(first.headers["X-Credits-Charged"])
    assert await _balance(client, test) == test_start - charged
    # The same idempotency key in live mode is a new request of its own (another database).
    other = await client.post(
        "/api/v1/contacts/reveal", json={"contact_id": ids[0]}, headers={**live, "Idempotency-Key": "test-1"}
    )
    assert other.status_code == 404 or other.json() != first.json()

    # A batch reveal spends what the test balance holds, then says why it stopped; a reveal is then a 402.
    batch = await client.post("/api/v1/contacts/batch-reveal", json={"contact_ids": ids[1:100]}, headers=test)
    assert batch.status_code == 200, batch.text
    statuses = {item["status"] for item in batch.json()["results"]}
    assert "insufficient_credits" in statuses and "revealed" in statuses
    refused = await client.post("/api/v1/contacts/reveal", json={"contact_id": ids[-1]}, headers=test)
    assert refused.status_code == 402, refused.text
    assert refused.json()["code"] == "insufficient_credits"

    # An enrichment dry run plans without providers' keys or credits.
    planned = await client.post(
        f"/api/v1/contacts/{ids[0]}/enrich", json={"dry_run": True}, headers={"X-API-Key": keys["full"]}
    )
    assert planned.status_code == 200, planned.text

    # A report of a wrong field of a test reveal: recorded in test mode only, refunded on the test balance.
    reported = await client.post(
        f"/api/v1/contacts/{ids[0]}/report", json={"field": "phone", "problem": "disconnected"}, headers=test
    )
    assert reported.status_code in (200, 201, 202), reported.text
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(select(func.count()).select_from(ContactReport)) == 0
    async with app.state.sandbox.database.read_sessions() as session:
        assert (
            await session.scalar(
                select(func.count()).select_from(ContactReport).where(ContactReport.account_id == account.id)
            )
            == 1
        )

    # The reset: the test balance is full again; live mode never moved.
    reset = await client.post("/api/v1/account/test-balance/reset", headers=test)
    assert reset.status_code == 200 and Decimal(str(reset.json()["balance"]["total"])) == Decimal(25)
    assert await _balance(client, test) == Decimal(25)
    assert "test_reset" in {e["kind"] for e in await _ledger(client, test)}
    assert await _balance(client, live) == live_before
    assert await _ledger(client, live) == live_ledger
