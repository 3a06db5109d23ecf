"""Signal query latency at 1,000,000 signals (D22): `GET /api/v1/signals` through the whole
app in process (ASGI), with single and combined filters, `since`, and cursor pages. Goal: p99 ≤ 50 ms.

The signals are written straight into the table in bulk (the pipeline's own row writer), spread over
the 46 verticals, 51 states, six categories and three intent levels, 2 % fcra_blocked.

    python -m bench.signals_query [--backends postgresql,sqlite] [--signals 1000000] [--requests 400]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
from sqlalchemy import update

from bench.webhooks_support import percentile, scratch_database
from vpx.accounts import service as account_service
from vpx.app import create_app
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.config import Settings
from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.credits import service as credit_service
from vpx.demo.generator import demo_contacts
from vpx.geography import STATES
from vpx.models import SignalCounter
from vpx.registries import bulk
from vpx.signals.events import CATEGORIES
from vpx.signals.pipeline import SIGNAL_COLUMNS, SIGNALS
from vpx.verticals import VERTICALS

LEVELS = ("hot", "warm", "cold")


async def _load(app: Any, count: int) -> str:
    settings, database, now = app.state.settings, app.state.database, datetime.now(UTC)
    async with database.write_sessions() as session, session.begin():
        ids = await add_contacts(
            session, [contact_row(f, origin="demo", now=now) for f in demo_contacts(10_000, seed=4)],
            search=app.state.search, now=now,
        )  # fmt: skip
        account = await account_service.create_account(
            session, name="bench", email=None, plan="free", now=now, settings=settings
        )
        await credit_service.add_credits(
            session, account_id=account.id, amount=Decimal(10), kind="grant", reference=None, description="bench",
            now=now, settings=settings,
        )  # fmt: skip
        _, secret = await key_service.create_key(
            session, account_id=account.id, key_type=KeyType.ro, name="bench", ip_allowlist=[], now=now,
            settings=settings,
        )  # fmt: skip
    rng = random.Random(1)
    states = sorted(STATES)
    postgres = not database.is_sqlite
    start = now - timedelta(days=30)
    for first in range(0, count, 20_000):
        rows = []
        for n in range(first, min(count, first + 20_000)):
            blocked = rng.random() < 0.02
            evidence = {"timeline": "Q1", "interest": "crm"}
            values = {
                "id": f"sg_bench{n:012d}", "sequence": n + 1, "category": rng.choice(CATEGORIES),
                "industry": rng.choice(VERTICALS), "intent_level": rng.choice(LEVELS),
                "source_status": "fcra_blocked" if blocked else "available", "confidence": 0.75,
                "topic": "crm software", "state": rng.choice(states), "city": "Denver", "summary": "bench signal",
                "evidence": json.dumps(evidence) if postgres else evidence,
                "contact_id": None if blocked else rng.choice(ids), "source": "bench", "source_record_id": str(n),
                "observed_at": start + timedelta(seconds=n * 2), "created_at": start + timedelta(seconds=n * 2),
            }  # fmt: skip
            rows.append(tuple(values[c] for c in SIGNAL_COLUMNS))
        async with database.write_sessions() as session, session.begin():
            await bulk.insert_rows(session, SIGNALS, SIGNAL_COLUMNS, rows)
    async with database.write_sessions() as session, session.begin():
        await session.execute(update(SignalCounter).values(value=count))
    return secret


def _queries(rng: random.Random, since: datetime, earlier: datetime) -> list[str]:
    """The query mix. ``since`` is newer than every signal (the answer is empty, and SQLite's plan used
    to walk whole indexes to find that out); ``earlier`` is about 130,000 signals back."""
    states = sorted(STATES)
    recent, older = (at.isoformat().replace("+00:00", "Z") for at in (since, earlier))
    return [
        "",
        f"industry={rng.choice(VERTICALS)}",
        f"state={rng.choice(states)}",
        f"category={rng.choice(CATEGORIES)}&intent_level=hot",
        f"industry={rng.choice(VERTICALS)}&state={rng.choice(states)}",
        f"industry={rng.choice(VERTICALS)}&state={rng.choice(states)}&intent_level=warm&category={rng.choice(CATEGORIES)}",
        "source_status=fcra_blocked",
        f"since={recent}&state={rng.choice(states)}",
        f"since={recent}",
        f"since={recent}&category={rng.choice(CATEGORIES)}&intent_level=hot",
        f"since={older}",
        f"since={older}&state={rng.choice(states)}",
    ]


def _shape(query: str) -> str:
    """A query's parameter names: what its plan depends on."""
    return "&".join(part.split("=", 1)[0] for part in query.split("&")) or "(no filter)"


async def run(backend: str, count: int, requests: int) -> dict[str, Any]:
    async with scratch_database(backend) as url:
        settings = Settings(
            database_url=url, log_level="WARNING", rate_limit="10000000/minute", worker_in_process=False
        )
        app = create_app(settings)
        secret = await _load(app, count)
        if backend == "postgresql":
            async with app.state.database.write_engine.connect() as conn:
                await conn.exec_driver_sql("COMMIT")
                await conn.exec_driver_sql("ANALYZE signals")
        rng = random.Random(2)
        timings: list[float] = []
        slowest: dict[str, float] = {}
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://bench", headers={"X-API-Key": secret}) as client,
        ):
            # The signals span 30 to 7 days ago (two seconds apart).
            since, earlier = datetime.now(UTC) - timedelta(days=3), datetime.now(UTC) - timedelta(days=10)
            for n in range(requests + 20):
                query = rng.choice(_queries(rng, since, earlier))
                started = time.perf_counter()
                page = await client.get(f"/api/v1/signals?limit=25&{query}")
                elapsed = time.perf_counter() - started
                assert page.status_code == 200, page.text
                cursor = page.json()["next_cursor"]
                if cursor and n % 2:
                    started = time.perf_counter()
                    following = await client.get(f"/api/v1/signals?limit=25&{query}&cursor={cursor}")
                    assert following.status_code == 200
                    elapsed = time.perf_counter() - started
                if n >= 20:
                    timings.append(elapsed * 1000)
                    shape = _shape(query)
                    slowest[shape] = max(slowest.get(shape, 0.0), elapsed * 1000)
        worst = max(slowest, key=lambda shape: slowest[shape])
        return {
            "p50": percentile(timings, 0.5), "p99": percentile(timings, 0.99), "max": max(timings),
            "worst": worst, "worst_ms": slowest[worst],
        }  # fmt: skip


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backends", default="postgresql,sqlite")
    parser.add_argument("--signals", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=400)
    args = parser.parse_args()
    print(f"GET /api/v1/signals over {args.signals:,} signals, {args.requests} requests (half of them a next page)")
    for backend in args.backends.split(","):
        r = await run(backend, args.signals, args.requests)
        print(
            f"{backend:<11} p50 {r['p50']:6.1f} ms   p99 {r['p99']:6.1f} ms   max {r['max']:6.1f} ms   "
            f"(slowest shape: {r['worst']}, {r['worst_ms']:.1f} ms)",
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main())
