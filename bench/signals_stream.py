"""Signal stream fan-out (D23): N concurrent SSE clients on one server process while 100
signals a second are ingested; commit-to-client latency p50/p99 and the server's memory per connection.
Goal: 1,000 clients, p99 ≤ 250 ms.

The server is a real `uvicorn` process (`vpx.app:create_app`); the clients are raw asyncio connections
in this process that read only each message's `id:` line (the sequence), so the client side stays
cheap; the ingester is a third process ingesting 10 signals every 100 ms through the real pipeline
and noting when each batch committed. *Filtered*: each client asks for one of the 46 verticals (about
2 signals a second each); *unfiltered*: every client receives every signal.

    python -m bench.signals_stream [--backends postgresql,sqlite] [--clients 50,1000] [--seconds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import multiprocessing
import os
import random
import re
import subprocess
import sys
import time
from array import array
from datetime import UTC, datetime
from decimal import Decimal
from itertools import repeat
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from bench.webhooks_support import percentile, scratch_database
from vpx.verticals import VERTICALS

RATE_PER_BATCH, BATCH_INTERVAL_S = 10, 0.1  # 100 signals a second


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_server(url: str) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    env = {**os.environ, "VPX_DATABASE_URL": url, "VPX_LOG_LEVEL": "WARNING", "VPX_RATE_LIMIT": "1000000/minute",
           "VPX_STREAM_QUEUE_SIZE": "100000", "VPX_STREAM_POLL_SECONDS": "0.05"}  # fmt: skip
    command = [sys.executable, "-m", "uvicorn", "--factory", "vpx.app:create_app", "--port", str(port)]
    server = subprocess.Popen([*command, "--log-level", "warning", "--no-access-log"], env=env)
    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                return server, port
        except httpx.TransportError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("the server did not start")


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def _seed(url: str) -> tuple[str, list[str]]:
    from vpx.app import create_app
    from vpx.auth import service as key_service
    from vpx.auth.keys import KeyType
    from vpx.config import Settings
    from vpx.contacts.catalogue import add_contacts, contact_row
    from vpx.demo.generator import demo_contacts

    settings = Settings(database_url=url, log_level="WARNING")
    app = create_app(settings)
    now = datetime.now(UTC)
    from vpx.accounts import service as account_service
    from vpx.credits import service as credit_service

    async with app.state.database.write_sessions() as session, session.begin():
        rows = [contact_row(f, origin="demo", now=now) for f in demo_contacts(2_000, seed=3)]
        ids = await add_contacts(session, rows, search=app.state.search, now=now)
        account = await account_service.create_account(
            session, name="bench", email=None, plan="free", now=now, settings=settings
        )
        await credit_service.add_credits(
            session, account_id=account.id, amount=Decimal(10), kind="grant", reference=None, description="bench",
            now=now, settings=settings,
        )  # fmt: skip
        _, secret = await key_service.create_key(
            session, account_id=account.id, key_type=KeyType.full, name="bench", ip_allowlist=[], now=now,
            settings=settings,
        )  # fmt: skip
    await app.state.database.dispose()
    return secret, [f"ct_{i}" for i in ids]


def _ingester(url: str, contacts: list[str], seconds: float, out: Any) -> None:
    """A process of its own: 10 signals every 100 ms; sends (signal id, commit time) pairs back."""

    async def run() -> None:
        from vpx.clock import Clock
        from vpx.config import Settings
        from vpx.db import Database
        from vpx.signals.events import SignalEvent
        from vpx.signals.pipeline import ingest_events

        settings = Settings(database_url=url, log_level="WARNING", worker_in_process=False)
        database = Database(settings)
        rng = random.Random(5)
        committed: list[tuple[str, float]] = []
        started = time.monotonic()
        n = 0
        while time.monotonic() - started < seconds:
            tick = time.monotonic()
            events = [
                SignalEvent(
                    category="switching_intent",
                    industry=rng.choice(VERTICALS),
                    observed_at=datetime.now(UTC),
                    evidence={"timeline": "Q1"},
                    source_record_id=f"s{n + i}",
                    contact_id=rng.choice(contacts),
                )
                for i in range(RATE_PER_BATCH)
            ]
            n += RATE_PER_BATCH
            report = await ingest_events(database, events, settings=settings, clock=Clock(), batch_size=100)
            at = time.time()
            committed += [(signal_id, at) for signal_id in report.signal_ids]
            await asyncio.sleep(max(0.0, BATCH_INTERVAL_S - (time.monotonic() - tick)))
        await database.dispose()
        out.send(committed)

    asyncio.run(run())


# An `id:` line: JSON escapes line breaks, so "id: <digits>" then a line break occurs nowhere else.
ID_LINE = re.compile(rb"id: (\d+)\n")


class Arrivals:
    """What one client received: each signal's sequence and when it arrived, in arrival order. Plain
    arrays, not lists of tuples: two million tracked objects made this process's own garbage
    collections pause it for up to 200 ms every few seconds, which showed as the server's latency."""

    def __init__(self) -> None:
        self.sequences = array("q")
        self.times = array("d")

    def add(self, at: float, found: list[bytes]) -> None:
        self.sequences.extend(map(int, found))
        self.times.extend(repeat(at, len(found)))


async def _client(port: int, key: str, industry: str | None, received: Arrivals, ready: Any) -> None:
    """One SSE connection that notes the sequence of each signal message and when it arrived whole.

    It takes whatever the socket holds and finds the `id:` lines of the complete messages with one
    regular expression: reading line by line cost this process most of a core at 100,000 messages a
    second, on the cores the server needs (docs/benchmarks.md). A message counts from the read that
    brought its last byte."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    query = f"?industry={industry}" if industry else ""
    writer.write(
        f"GET /api/v1/signals/stream{query} HTTP/1.1\r\nHost: bench\r\nX-API-Key: {key}\r\n"
        "Accept: text/event-stream\r\n\r\n".encode()
    )
    await writer.drain()
    opened = False
    pending = b""
    try:
        while chunk := await reader.read(1 << 16):
            at = time.time()
            pending += chunk
            if not opened and b": vpx signal stream" in pending:
                opened = True
                ready.release()
            # Signal messages end with a blank line; a read may stop inside one.
            end = pending.rfind(b"\n\n")
            if end < 0:
                continue
            complete, pending = pending[: end + 2], pending[end + 2 :]
            received.add(at, ID_LINE.findall(complete))
    finally:
        writer.close()


def _industry(client: int, filtered: bool) -> str | None:
    return VERTICALS[client % len(VERTICALS)] if filtered else None


async def run(backend: str, clients: int, seconds: float, filtered: bool) -> dict[str, float]:
    async with scratch_database(backend) as url:
        key, contacts = await _seed(url)
        server, port = await asyncio.to_thread(_start_server, url)
        try:
            rss_before = _rss_kib(server.pid)
            arrivals = [Arrivals() for _ in range(clients)]
            ready = asyncio.Semaphore(0)
            tasks = [
                asyncio.create_task(_client(port, key, _industry(i, filtered), arrivals[i], ready))
                for i in range(clients)
            ]
            for _ in range(clients):
                await asyncio.wait_for(ready.acquire(), timeout=120)
            rss_connected = _rss_kib(server.pid)
            # What exists now (connections, tasks, the libraries) lives until the end: the client's
            # collections need not walk it again and again (they would pause every client at once).
            gc.freeze()
            mine, theirs = multiprocessing.Pipe()
            ingester = multiprocessing.Process(target=_ingester, args=(url, contacts, seconds, theirs))
            ingester.start()
            committed = await asyncio.to_thread(mine.recv)
            await asyncio.sleep(2)  # the last messages on their way
            ingester.join()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            server.terminate()
            try:
                await asyncio.to_thread(server.wait, 30)
            except subprocess.TimeoutExpired:
                server.kill()
                await asyncio.to_thread(server.wait)
        from vpx.config import Settings
        from vpx.db import Database
        from vpx.models import Signal

        database = Database(Settings(database_url=url, log_level="WARNING"))
        async with database.read_sessions() as session:
            rows = (await session.execute(select(Signal.id, Signal.sequence, Signal.industry))).all()
        await database.dispose()
        gc.unfreeze()
        received = [list(zip(per_client.sequences, per_client.times, strict=True)) for per_client in arrivals]
        sequence_of = {signal_id: sequence for signal_id, sequence, _ in rows}
        at = {sequence_of[signal_id]: t for signal_id, t in committed}
        # Every client must have had every signal its filter matches, once each and in commit order.
        by_industry: dict[str | None, list[int]] = {None: sorted(at)}
        for _, sequence, industry in sorted(rows, key=lambda row: row[1]):
            if sequence in at:
                by_industry.setdefault(industry, []).append(sequence)
        complete = sum(
            [sequence for sequence, _ in per_client] == by_industry.get(_industry(i, filtered), [])
            for i, per_client in enumerate(received)
        )
        latencies = [(t - at[seq]) * 1000 for per_client in received for seq, t in per_client if seq in at]
        return {
            "complete": complete,
            "messages": len(latencies),
            "p50": percentile(latencies, 0.50),
            "p99": percentile(latencies, 0.99),
            "kib_per_connection": (rss_connected - rss_before) / clients,
        }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backends", default="postgresql,sqlite")
    parser.add_argument("--clients", default="50,1000")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--scenarios", default="filtered,unfiltered")
    args = parser.parse_args()
    scenarios = [name == "filtered" for name in args.scenarios.split(",")]
    print(f"100 signals/s for {args.seconds:.0f} s; latency from the ingest's commit to the client's read")
    print(
        f"{'database':<11} {'clients':>7} {'scenario':<11} {'complete':>9} {'messages':>9} {'p50 ms':>8} "
        f"{'p99 ms':>8} {'KiB/conn':>9}"
    )
    for backend in args.backends.split(","):
        for clients in (int(c) for c in args.clients.split(",")):
            for filtered in scenarios:
                r = await run(backend, clients, args.seconds, filtered)
                name = "filtered" if filtered else "unfiltered"
                print(
                    f"{backend:<11} {clients:>7,} {name:<11} {int(r['complete']):>4,}/{clients:<4,} "
                    f"{int(r['messages']):>9,} {r['p50']:>8.0f} {r['p99']:>8.0f} {r['kib_per_connection']:>9.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    asyncio.run(main())
