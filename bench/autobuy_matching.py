"""Auto-buy matching cost per ingested signal: 100, 1,000 and 10,000 active rules across
1,000 accounts, on SQLite and PostgreSQL. Goal: ≤ 2 ms a signal at 10,000 rules, nearly flat.

Signals go through the real pipeline in batches of 100; the auto-buy hook is timed on its own (a
wrapper around ``buy_matching_contacts``), so the figure is what matching adds to an ingest. Two
scenarios: *match only* (the rules are found and weighed but none wants the signal: their category
differs) and *with purchases* (a share of the rules buy; each purchase is a full reveal).

    python -m bench.autobuy_matching [--backends sqlite,postgresql] [--rules 100,1000,10000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select

from bench.webhooks_support import scratch_database
from vpx.accounts import service as account_service
from vpx.app import create_app
from vpx.autobuy import matching
from vpx.autobuy import service as rule_service
from vpx.autobuy.schemas import RuleCreate
from vpx.clock import Clock
from vpx.config import Settings
from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.credits import service as credit_service
from vpx.db import Database
from vpx.demo.generator import demo_contacts
from vpx.models import AutoBuyPurchase
from vpx.signals import hooks
from vpx.signals.events import SignalEvent
from vpx.signals.pipeline import ingest_events
from vpx.verticals import VERTICALS

STATES = ["CA", "TX", "FL", "NY", "PA", "IL", "OH", "GA", "NC", "MI", "CO", "WA", "AZ", "MA", "VA", "NJ"]
ACCOUNTS, SIGNALS, CONTACTS = 1_000, 2_000, 5_000


class Timed:
    """The auto-buy hook with a stopwatch around it."""

    def __init__(self) -> None:
        self.seconds = 0.0

    async def __call__(self, session: Any, signals: Sequence[Any], context: Any) -> None:
        started = time.perf_counter()
        await matching.buy_matching_contacts(session, signals, context)
        self.seconds += time.perf_counter() - started


async def _setup(database: Database, settings: Settings, search: Any, rules: int, *, buying: bool) -> list[str]:
    rng = random.Random(rules)
    now = datetime.now(UTC)
    async with database.write_sessions() as session, session.begin():
        accounts = []
        for n in range(ACCOUNTS):
            account = await account_service.create_account(
                session, name=f"bench {n}", email=None, plan="free", now=now, settings=settings
            )
            await credit_service.add_credits(
                session, account_id=account.id, amount=Decimal(100_000), kind="grant", reference=None,
                description="bench", now=now, settings=settings,
            )  # fmt: skip
            accounts.append(account.id)
        for n in range(rules):
            body = RuleCreate(
                name=f"rule {n}",
                industries=rng.sample(VERTICALS, rng.randint(1, 3)),
                states=rng.sample(STATES, rng.randint(1, 4)),
                min_confidence=rng.choice([0.0, 0.5, 0.9]),
                # Match only: the signals are switching_intent, so these rules are weighed and passed by.
                categories=["switching_intent"] if buying and n % 10 == 0 else ["bant_qualified"],
                budget_credits=Decimal(50),
                daily_cap=20,
            )
            await rule_service.create_rule(session, account_id=accounts[n % ACCOUNTS], body=body, now=now)
        rows = [contact_row(f, origin="demo", now=now) for f in demo_contacts(CONTACTS, seed=11)]
        ids = await add_contacts(session, rows, search=search, now=now)
    return [f"ct_{i}" for i in ids]


def _events(contacts: list[str], seed: int) -> list[SignalEvent]:
    rng = random.Random(seed)
    observed = datetime(2026, 11, 20, tzinfo=UTC)
    return [
        SignalEvent(
            category="switching_intent",
            industry=rng.choice(VERTICALS),
            observed_at=observed,
            evidence={"interest": "crm"},
            source_record_id=f"b{seed}-{n}",
            confidence=rng.random(),
            state=rng.choice(STATES),
            contact_id=rng.choice(contacts),
        )
        for n in range(SIGNALS)
    ]


async def run(backend: str, rules: int, *, buying: bool) -> tuple[float, float, int]:
    """Per signal: the hook's milliseconds and the whole ingest's; and the purchases made."""
    async with scratch_database(backend) as url:
        settings = Settings(database_url=url, log_level="WARNING", worker_in_process=False)
        app = create_app(settings)
        database: Database = app.state.database
        try:
            contacts = await _setup(database, settings, app.state.search, rules, buying=buying)
            timed = Timed()
            original = hooks.INGEST_HOOKS
            hooks.INGEST_HOOKS = tuple(timed if h is matching.buy_matching_contacts else h for h in original)
            try:
                started = time.perf_counter()
                await ingest_events(
                    database, _events(contacts, rules), settings=settings, clock=Clock(), batch_size=100
                )
                total = time.perf_counter() - started
            finally:
                hooks.INGEST_HOOKS = original
            async with database.read_sessions() as session:
                bought = int(await session.scalar(select(func.count()).select_from(AutoBuyPurchase)) or 0)
            return timed.seconds / SIGNALS * 1000, total / SIGNALS * 1000, bought
        finally:
            await database.dispose()


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--rules", default="100,1000,10000")
    args = parser.parse_args()
    print(f"{SIGNALS:,} signals in batches of 100, {ACCOUNTS:,} accounts, {CONTACTS:,} contacts")
    print(
        f"{'database':<11} {'rules':>7} {'scenario':<15} {'hook ms/signal':>15} {'ingest ms/signal':>17} {'bought':>7}"
    )
    for backend in args.backends.split(","):
        for rules in (int(r) for r in args.rules.split(",")):
            for buying in (False, True):
                hook_ms, ingest_ms, bought = await run(backend, rules, buying=buying)
                scenario = "with purchases" if buying else "match only"
                print(f"{backend:<11} {rules:>7,} {scenario:<15} {hook_ms:>15.3f} {ingest_ms:>17.3f} {bought:>7,}")


if __name__ == "__main__":
    asyncio.run(main())
