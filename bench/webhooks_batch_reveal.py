"""Batch reveal of 100 ids without a webhook, through the whole HTTP stack (in-process ASGI), on SQLite
and PostgreSQL. Goal: p99 <= 150 ms.

    .venv/bin/python -m bench.webhooks_batch_reveal [--requests 40] [--backends sqlite postgresql]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from datetime import UTC, datetime
from decimal import Decimal

import httpx

from bench.webhooks_support import percentile, scratch_database, summary
from vpx.accounts import service as account_service
from vpx.app import create_app
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.config import Settings
from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.credits import service as credit_service
from vpx.demo.generator import demo_contacts


async def run(backend: str, requests: int, catalogue: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU seconds (this process: the service, and SQLite itself) of each request."""
    async with scratch_database(backend) as url:
        settings = Settings(database_url=url, log_level="WARNING", rate_limit="1000000/minute", worker_in_process=False)
        app = create_app(settings)
        database, now = app.state.database, datetime.now(UTC)
        rows = [contact_row(f, origin="demo", now=now) for f in demo_contacts(catalogue, seed=5)]
        async with database.write_sessions() as session, session.begin():
            ids = await add_contacts(session, rows, search=app.state.search, now=now)
            account = await account_service.create_account(
                session, name="bench", email=None, plan="free", now=now, settings=settings
            )
            await credit_service.add_credits(
                session,
                account_id=account.id,
                amount=Decimal(1_000_000),
                kind="grant",
                reference=None,
                description="bench",
                now=now,
                settings=settings,
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
        timings, cpu = [], []
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        # The app's start-up and shutdown as `vpx serve` runs them (it disposes of the database).
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://bench", headers={"X-API-Key": secret}) as client,
        ):
            for n in range(requests + 3):
                batch = [f"ct_{i}" for i in ids[n * 100 : (n + 1) * 100]]
                started, started_cpu = time.perf_counter(), time.process_time()
                response = await client.post("/api/v1/contacts/batch-reveal", json={"contact_ids": batch})
                elapsed, used = time.perf_counter() - started, time.process_time() - started_cpu
                assert response.status_code == 200 and response.json()["counts"] == {"revealed": 100}, response.text
                if n >= 3:  # the first requests warm caches and connections
                    timings.append(elapsed)
                    cpu.append(used)
        return timings, cpu


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"])
    args = parser.parse_args()
    for backend in args.backends:
        timings, cpu = await run(backend, args.requests, catalogue=(args.requests + 3) * 100 + 1000)
        verdict = "meets" if percentile(timings, 0.99) <= 0.150 else "misses"
        print(f"{backend}: batch reveal of 100 ids: {summary(timings)} ({verdict} the 150 ms goal)")
        print(f"{backend}:   CPU time of this process per request: {summary(cpu)}")
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    asyncio.run(main())
