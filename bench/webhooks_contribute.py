"""Contribution of 1,000 rows against a 1,000,000-contact catalogue, through the whole HTTP stack
(in-process ASGI). Goal: p99 <= 2 s.

    .venv/bin/python -m bench.webhooks_contribute [--catalogue 1000000] [--requests 12] [--backends postgresql sqlite]

Each request: 500 new businesses, 250 duplicates of catalogue phones, 150 of catalogue names (same
city and state), 100 repeats of rows earlier in the request.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from datetime import UTC, datetime

import httpx
from sqlalchemy import text

from bench.webhooks_support import percentile, scratch_database, summary
from vpx.accounts import service as account_service
from vpx.app import create_app
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.config import Settings

CITIES = ["Austin", "Dallas", "Houston", "Denver", "Boulder", "Phoenix", "Tucson", "Miami", "Tampa", "Atlanta"]
STATES = ["TX", "TX", "TX", "CO", "CO", "AZ", "AZ", "FL", "FL", "GA"]


def catalogue_sql(dialect: str, count: int) -> str:
    """One INSERT … SELECT that makes ``count`` contacts inside the database (fast), keyed as the
    catalogue's own writer keys them: name_key, city_key, E.164 phone."""
    city = "CASE g % 10 " + " ".join(f"WHEN {i} THEN '{c}'" for i, c in enumerate(CITIES)) + " END"
    state = "CASE g % 10 " + " ".join(f"WHEN {i} THEN '{s}'" for i, s in enumerate(STATES)) + " END"
    series = (
        f"generate_series(1, {count}) AS t(g)"
        if dialect == "postgresql"
        else f"(WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < {count}) SELECT g FROM s)"
    )
    cat = "||"
    return f"""
        INSERT INTO contacts (business_name, name_key, city, city_key, state, country, phone, industry,
                              status, origin, created_at, updated_at)
        SELECT 'Catalogue Firm ' {cat} g, 'catalogue firm ' {cat} g, {city}, lower({city}), {state}, 'US',
               '+1303' {cat} (2000000 + g), 'legal', 'active', 'registry', :now, :now
        FROM {series}"""


def contribution(request: int, catalogue: int) -> list[dict[str, str]]:
    rows = []
    for i in range(500):
        n = request * 1000 + i
        rows.append(
            {
                "business_name": f"New Practice {n}",
                "phone": f"+1512{3000000 + n}",
                "city": CITIES[n % 10],
                "state": STATES[n % 10],
                "industry": "legal",
            }
        )
    step = catalogue // 400
    for i in range(250):  # a catalogue phone under another name
        g = 1 + (request * 7919 + i * step) % catalogue
        rows.append(
            {"business_name": f"Renamed {g}", "phone": f"+1303{2000000 + g}", "city": "Austin", "state": "TX"}
            | {"industry": "legal"}
        )
    for i in range(150):  # a catalogue business (name, city, state) with another phone
        g = 1 + (request * 104729 + i * step + 13) % catalogue
        rows.append(
            {
                "business_name": f"CATALOGUE FIRM {g}, LLC",
                "phone": f"+1720{3000000 + request * 1000 + i}",
                "city": CITIES[g % 10],
                "state": STATES[g % 10],
                "industry": "legal",
            }
        )
    rows.extend(rows[i] for i in range(100))  # repeats within the request
    return rows


async def run(backend: str, catalogue: int, requests: int) -> tuple[list[float], dict[str, int], float]:
    async with scratch_database(backend) as url:
        settings = Settings(database_url=url, log_level="WARNING", rate_limit="1000000/minute", worker_in_process=False)
        app = create_app(settings)
        database, now = app.state.database, datetime.now(UTC)
        started = time.perf_counter()
        async with database.write_sessions() as session, session.begin():
            await session.execute(text(catalogue_sql(database.dialect, catalogue)), {"now": now})
        if database.dialect == "postgresql":
            async with database.write_engine.connect() as conn:
                await conn.execute(text("COMMIT"))
                await conn.execute(text("ANALYZE contacts"))
        load_seconds = time.perf_counter() - started
        async with database.write_sessions() as session, session.begin():
            account = await account_service.create_account(
                session, name="publisher", email=None, plan="free", now=now, settings=settings
            )
            _, secret = await key_service.create_key(
                session,
                account_id=account.id,
                key_type=KeyType.live,
                name="bench",
                ip_allowlist=[],
                now=now,
                settings=settings,
            )
        timings: list[float] = []
        counts: dict[str, int] = {}
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        headers = {"X-API-Key": secret}
        # The app's start-up and shutdown as `vpx serve` runs them (it disposes of the database).
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://bench", headers=headers) as client,
        ):
            for n in range(requests + 2):
                body = {"contacts": contribution(n, catalogue)}
                began = time.perf_counter()
                response = await client.post("/api/v1/contacts/contribute", json=body, timeout=60)
                elapsed = time.perf_counter() - began
                assert response.status_code == 200, response.text
                if n >= 2:
                    timings.append(elapsed)
                    counts = response.json()["counts"]
        return timings, counts, load_seconds


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--catalogue", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=12)
    parser.add_argument("--backends", nargs="+", default=["postgresql", "sqlite"])
    args = parser.parse_args()
    for backend in args.backends:
        timings, counts, loaded = await run(backend, args.catalogue, args.requests)
        verdict = "meets" if percentile(timings, 0.99) <= 2.0 else "misses"
        print(f"{backend}: catalogue of {args.catalogue:,} loaded in {loaded:.0f} s; last request's counts {counts}")
        print(f"{backend}: contribution of 1,000 rows: {summary(timings)} ({verdict} the 2 s goal)")
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    asyncio.run(main())
