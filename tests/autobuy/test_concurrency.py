"""Budget, daily cap and balance stay exact whatever the concurrency (D24): 500 matching signals
ingested at once — through 4 `vpx signals ingest` processes on PostgreSQL, through 4 concurrent
in-process ingests on the embedded default — never spend past a rule's budget (30), its daily cap (20)
or the account's balance; no contact is bought twice; the ledger is exact."""

from __future__ import annotations

import asyncio
import json
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.autobuy.support import COLD, RULES, WARM, auto_buy_spent, create_rule, purchases_of
from tests.factories import Factory, details
from tests.signals.support import event, ingest
from tests.test_cli import VPX
from vpx.models import LedgerEntry, Reveal

pytestmark = pytest.mark.asyncio

SIGNALS, WORKERS = 500, 4


async def _setup(
    client: httpx.AsyncClient, factory: Factory
) -> tuple[Any, Any, dict[str, Any], dict[str, Any], list[str]]:
    budgeted = await factory.account(credits=1000)
    poor = await factory.account()  # 25 free credits only
    rule = await create_rule(client, budgeted.headers("full"), budget_credits=30, daily_cap=20)
    capped = await create_rule(client, poor.headers("full"), daily_cap=20)
    rows = [
        {"business_name": f"Plumber {n}", "city": "Denver", "state": "CO", "industry": "home-services"}
        | details(n) | {"phone": f"+1720555{n:04d}"}
        for n in range(SIGNALS)
    ]  # fmt: skip
    contacts = await factory.contacts(rows)
    return budgeted, poor, rule, capped, contacts


def _events(contacts: list[str]) -> list[dict[str, Any]]:
    """500 signals: every contact once, warm (3 credits) and cold (1) mixed, and 40 more signals about
    contacts already named, so the same contact arrives in several processes at once."""
    events = [
        {"category": "switching_intent", "industry": "home-services", "observed_at": "2026-11-20T10:00:00Z",
         "contact_id": c, "evidence": WARM if n % 3 == 0 else COLD, "source_record_id": f"e{n}"}
        for n, c in enumerate(contacts[: SIGNALS - 40])
    ]  # fmt: skip
    events += [dict(events[n], source_record_id=f"again{n}") for n in range(40)]
    return events


async def _check(app: FastAPI, client: httpx.AsyncClient, budgeted: Any, poor: Any, rule: dict[str, Any]) -> None:
    bought = await purchases_of(app, budgeted.id)
    spent = sum((p.credits_charged for p in bought), Decimal(0))
    shown = (await client.get(f"{RULES}/{rule['id']}", headers=budgeted.headers("full"))).json()
    assert spent <= 30 and len(bought) <= 20
    # The rule stopped at a limit, not earlier: the cap, or a budget with less than a contact left.
    assert len(bought) == 20 or spent == 30, (len(bought), spent)
    assert shown["spent_total"] == spent and shown["purchases_total"] == len(bought)
    assert len({p.contact_id for p in bought}) == len(bought)
    assert await auto_buy_spent(app, budgeted.id) == spent
    poor_bought = await purchases_of(app, poor.id)
    poor_spent = sum((p.credits_charged for p in poor_bought), Decimal(0))
    assert len(poor_bought) <= 20 and poor_spent <= 25 and await auto_buy_spent(app, poor.id) == poor_spent
    async with app.state.database.read_sessions() as session:
        for account in (budgeted, poor):
            reveals = await session.scalar(
                select(func.count()).select_from(Reveal).where(Reveal.account_id == account.id)
            )
            assert reveals == len(await purchases_of(app, account.id))
            entries = await session.scalar(
                select(func.coalesce(func.sum(LedgerEntry.amount), 0)).where(LedgerEntry.account_id == account.id)
            )
            balance = (await client.get("/api/v1/account", headers=account.headers("ro"))).json()["balance"]["total"]
            assert Decimal(str(balance)) == Decimal(entries)  # the ledger sums to the balance


async def test_four_processes_on_postgresql(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, backend: str, database_url: str, tmp_path: Path
) -> None:
    if backend != "postgresql":
        pytest.skip("separate ingest processes share one database only on PostgreSQL; SQLite runs the in-process test")
    budgeted, poor, rule, _, contacts = await _setup(client, factory)
    events = _events(contacts)
    files = []
    for worker in range(WORKERS):
        path = tmp_path / f"events-{worker}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in events[worker::WORKERS]))
        files.append(path)
    env = {**os.environ, "VPX_DATABASE_URL": database_url, "VPX_LOG_LEVEL": "WARNING"}
    processes = [
        await asyncio.create_subprocess_exec(
            VPX, "signals", "ingest", str(path), "--batch-size", "5", "--json",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
        )
        for path in files
    ]  # fmt: skip
    ingested = 0
    for process in processes:
        out, err = await asyncio.wait_for(process.communicate(), timeout=300)
        assert process.returncode == 0, (err + out).decode()
        ingested += json.loads(out)["ingested"]
    assert ingested == SIGNALS
    await _check(app, client, budgeted, poor, rule)


async def test_concurrent_ingests_in_process(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    budgeted, poor, rule, _, contacts = await _setup(client, factory)
    from vpx.signals.evidence import event_from

    events = [event_from(e) for e in _events(contacts)]
    reports = await asyncio.gather(*(ingest(app, events[w::WORKERS], batch_size=5) for w in range(WORKERS)))
    assert sum(r.ingested for r in reports) == SIGNALS
    await _check(app, client, budgeted, poor, rule)
    assert event  # the support module's event() is what the other tests use; these come from JSON
