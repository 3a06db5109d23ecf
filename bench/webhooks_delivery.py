"""Webhook delivery on PostgreSQL with `vpx worker` processes: deliveries per second to a local
receiver with 1 and 4 workers, and commit-to-first-attempt latency (p50, p99).

    .venv/bin/python -m bench.webhooks_delivery [--events 5000] [--rate 100 --seconds 10]

Goals: >= 500 deliveries/s; p99 <= 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.webhooks_support import FastReceiver, percentile, scratch_database, summary
from vpx.accounts import service as account_service
from vpx.config import Settings
from vpx.db import Database
from vpx.outbound.resolver import system_resolver
from vpx.secrets import generate_key, load_box
from vpx.webhooks import service as webhook_service


def start_workers(url: str, count: int, secret_keys: str) -> list[subprocess.Popen[bytes]]:
    env = {
        **os.environ,
        "VPX_DATABASE_URL": url,
        "VPX_WEBHOOK_ALLOW_PRIVATE": "1",
        "VPX_LOG_LEVEL": "WARNING",
        # The key that sealed the endpoint's signing secret, so that the workers can open it.
        "VPX_SECRET_KEYS": secret_keys,
    }
    vpx = str(Path(sys.executable).parent / "vpx")
    return [
        subprocess.Popen([vpx, "worker", "--json", "--id", f"bench-{n}"], env=env, stdout=subprocess.DEVNULL)
        for n in range(count)
    ]


def stop_workers(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        worker.send_signal(signal.SIGTERM)
    for worker in workers:
        worker.wait(timeout=30)


async def setup(database: Database, receiver: FastReceiver, settings: Settings) -> str:
    now = datetime.now(UTC)
    async with database.write_sessions() as session, session.begin():
        account = await account_service.create_account(
            session, name="bench", email=None, plan="free", now=now, settings=settings
        )
        await webhook_service.create_endpoint(
            session,
            account_id=account.id,
            url=receiver.url,
            event_types=["signal.created"],
            signal_filter=None,
            description="bench",
            now=now,
            settings=settings,
            resolver=system_resolver,
            box=load_box(settings),
        )
    return account.id


async def wait_for(receiver: FastReceiver, count: int, limit: float) -> bool:
    deadline = time.monotonic() + limit
    while len(receiver.first_seen) < count and time.monotonic() < deadline:  # noqa: ASYNC110 (another thread fills it)
        await asyncio.sleep(0.02)
    return len(receiver.first_seen) >= count


async def throughput(database: Database, account_id: str, receiver: FastReceiver, events: int) -> float:
    """All events committed at once to idle workers; deliveries per second until the last arrives."""
    receiver.first_seen.clear()
    now = datetime.now(UTC)
    async with database.write_sessions() as session, session.begin():
        for n in range(events):
            await webhook_service.enqueue_event(
                session, account_id=account_id, event_type="signal.created", data={"id": f"sg_{n}"}, now=now
            )
    committed = time.time()
    if not await wait_for(receiver, events, limit=600):
        raise SystemExit(f"only {len(receiver.first_seen)} of {events} arrived")
    return events / (max(receiver.first_seen.values()) - committed)


async def latency(
    database: Database, account_id: str, receiver: FastReceiver, rate: float, seconds: float
) -> list[float]:
    """One event per transaction at a steady rate; seconds from each commit to its first arrival."""
    receiver.first_seen.clear()
    commits: dict[str, float] = {}
    total = int(rate * seconds)
    started = time.monotonic()
    for n in range(total):
        await asyncio.sleep(max(0.0, started + n / rate - time.monotonic()))
        async with database.write_sessions() as session, session.begin():
            [delivery] = await webhook_service.enqueue_event(
                session,
                account_id=account_id,
                event_type="signal.created",
                data={"id": f"lat_{n}"},
                now=datetime.now(UTC),
            )
            event_id = delivery.event_id
        commits[event_id] = time.time()
    await wait_for(receiver, total, limit=60)
    return [receiver.first_seen[e] - t for e, t in commits.items() if e in receiver.first_seen]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 4])
    args = parser.parse_args()
    receiver = FastReceiver().start()
    async with scratch_database("postgresql") as url:
        settings = Settings(
            database_url=url, webhook_allow_private=True, log_level="WARNING", secret_keys=generate_key()
        )
        database = Database(settings)
        account_id = await setup(database, receiver, settings)
        for count in args.workers:
            assert settings.secret_keys is not None
            workers = start_workers(url, count, settings.secret_keys)
            try:
                await asyncio.sleep(2.0)  # let the processes start and LISTEN
                rate = await throughput(database, account_id, receiver, args.events)
                print(f"workers={count} events={args.events}: {rate:.0f} deliveries/s")
                values = await latency(database, account_id, receiver, args.rate, args.seconds)
                print(f"workers={count} commit-to-first-attempt at {args.rate:g} events/s: {summary(values)}")
                print(f"  p99 {'meets' if percentile(values, 0.99) <= 1.0 else 'misses'} the 1 s goal")
            finally:
                stop_workers(workers)
        await database.dispose()
    receiver.stop()


if __name__ == "__main__":
    asyncio.run(main())
