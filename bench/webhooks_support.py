"""Shared parts of the issue-5 benchmarks: a throwaway PostgreSQL (or SQLite) database, a fast local
webhook receiver, percentiles."""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from vpx.config import Settings
from vpx.migrations import upgrade

POSTGRES_ADMIN = os.environ.get("VPX_BENCH_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres")


@asynccontextmanager
async def scratch_database(backend: str) -> AsyncIterator[str]:
    """A migrated, empty database that is dropped afterwards; yields its URL."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory(prefix="vpx-bench-") as folder:
            url = f"sqlite+aiosqlite:///{folder}/bench.db"
            await asyncio.to_thread(upgrade, Settings(database_url=url))
            yield url
        return
    name = f"vpx_bench_{uuid.uuid4().hex[:10]}"
    admin = create_async_engine(POSTGRES_ADMIN, isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = POSTGRES_ADMIN.rsplit("/", 1)[0] + "/" + name
    try:
        await asyncio.to_thread(upgrade, Settings(database_url=url))
        yield url
    finally:
        async with admin.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        await admin.dispose()


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


def summary(values: list[float]) -> str:
    return (
        f"n={len(values)} p50={percentile(values, 0.5) * 1000:.1f} ms p99={percentile(values, 0.99) * 1000:.1f} ms "
        f"max={max(values) * 1000:.1f} ms mean={statistics.fmean(values) * 1000:.1f} ms"
    )


class FastReceiver:
    """A minimal HTTP/1.1 keep-alive server on 127.0.0.1 in its own thread and event loop: answers
    200 at once and notes when each webhook-id first arrived (wall clock)."""

    def __init__(self) -> None:
        self.first_seen: dict[str, float] = {}
        self.requests = 0
        self.port = 0
        self.ready = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> FastReceiver:
        self.thread.start()
        self.ready.wait(10)
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def _run(self) -> None:
        self.loop = asyncio.new_event_loop()
        server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=1024))
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                webhook_id = ""
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    lowered = name.strip().lower()
                    if lowered == b"content-length":
                        length = int(value.strip())
                    elif lowered == b"webhook-id":
                        webhook_id = value.strip().decode()
                if length:
                    await reader.readexactly(length)
                self.requests += 1
                self.first_seen.setdefault(webhook_id, time.time())
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    def stop(self) -> None:
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.loop.stop)
