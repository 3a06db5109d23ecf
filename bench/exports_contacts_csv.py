"""Streams GET /api/v1/exports/contacts.csv from a real server and reports speed and memory.

    .venv/bin/python -m bench.exports_contacts_csv [--sizes 10000,100000] [--backends sqlite,postgresql]

For each size, one account has revealed that many contacts; the export is downloaded over loopback
and discarded. Printed: time to the first byte, rows per second, MB per second, and how far the server
process's peak resident memory (VmHWM) rose during the download. Goal (D30): constant
memory whatever the size, i.e. the memory rise does not grow with the row count.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import httpx
from sqlalchemy import func, insert, literal, select

from bench.common import fresh_database
from vpx.accounts import service as account_service
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.config import Settings
from vpx.contacts.catalogue import contact_row
from vpx.db import Database, UtcDateTime
from vpx.models import Contact, Reveal
from vpx.money import CreditsType

NAME = "vpx_bench_exports"
CHUNK = 10_000
WORDS = ("Summit", "Cedar", "Harbor", "Maple", "Granite", "Pioneer", "Beacon", "Willow", "Frontier", "Aspen")
TRADES = ("Plumbing", "Roofing", "Electric", "Heating", "Landscaping", "Painting", "Masonry", "Glass")


async def seed(url: str, count: int) -> str:
    """An account that has revealed ``count`` new contacts; returns a Standard key."""
    settings = Settings(database_url=url)
    database = Database(settings, pool=False)
    now = datetime.now(UTC)
    async with database.write_sessions() as session, session.begin():
        account = await account_service.create_account(
            session, name="bench", email=None, plan="free", now=now, settings=settings
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
        before = await session.scalar(select(func.coalesce(func.max(Contact.id), 0)))
        for start in range(0, count, CHUNK):
            rows = [
                contact_row(
                    {
                        "business_name": f"{WORDS[n % 10]} {TRADES[(n // 10) % 8]} Co",
                        "city": "Denver",
                        "state": "CO",
                        "industry": "home-services",
                        "phone": f"+1303555{n % 10_000:04d}",
                        "email": f"office{n}@bench.example",
                        "website": f"https://bench{n}.example",
                        "street": f"{n} Main St",
                        "postal_code": "80202",
                        "specialty": "Plumbing",
                        "license_type": "C-36 Plumbing Contractor",
                        "license_number": f"CO-{n}",
                        "license_state": "CO",
                    },
                    origin="registry",
                    now=now,
                )
                for n in range(start, min(count, start + CHUNK))
            ]
            await session.execute(insert(Contact.__table__), rows)
        await session.execute(
            insert(Reveal).from_select(
                ["account_id", "contact_id", "credits_charged", "channel", "created_at"],
                select(
                    literal(account.id),
                    Contact.id,
                    literal(Decimal(1), CreditsType()),
                    literal("reveal"),
                    literal(now, UtcDateTime()),
                ).where(Contact.id > before),
            )
        )
    await database.dispose()
    return secret


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM")


def serve(url: str) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "VPX_DATABASE_URL": url, "VPX_LOG_LEVEL": "WARNING", "VPX_RATE_LIMIT": "100000/minute"}
    command = [sys.executable, "-m", "uvicorn", "--factory", "vpx.app:create_app", "--port", str(port)]
    process = subprocess.Popen([*command, "--no-access-log", "--log-level", "warning"], env=env)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return process, base
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the server did not start")


def download(base: str, pid: int, key: str) -> dict[str, float]:
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    before = peak_rss_kib(pid)
    started = time.perf_counter()
    first = None
    size = lines = 0
    with httpx.stream("GET", base + "/api/v1/exports/contacts.csv", headers={"X-API-Key": key}, timeout=3600) as r:
        r.raise_for_status()
        for chunk in r.iter_bytes():
            first = first if first is not None else time.perf_counter() - started
            size += len(chunk)
            lines += chunk.count(b"\n")  # rows end in CRLF; a chunk may split the pair
    elapsed = time.perf_counter() - started
    return {
        "rows": lines - 1,
        "seconds": elapsed,
        "first_byte_ms": (first or 0) * 1000,
        "rows_per_s": (lines - 1) / elapsed,
        "mb_per_s": size / elapsed / 1e6,
        "mb": size / 1e6,
        "rss_rise_mib": (peak_rss_kib(pid) - before) / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--backends", default="sqlite,postgresql")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print("backend     rows   size MB  first byte ms   rows/s    MB/s  server RSS rise MiB")
    for backend in args.backends.split(","):
        url = fresh_database(backend, NAME)
        keys = {size: asyncio.run(seed(url, size)) for size in sizes}
        process, base = serve(url)
        try:
            download(base, process.pid, keys[sizes[0]])  # warm-up
            for size in sizes:
                f = download(base, process.pid, keys[size])
                assert f["rows"] == size, f
                print(
                    f"{backend:<10} {size:>7} {f['mb']:>9.1f} {f['first_byte_ms']:>14.1f} {f['rows_per_s']:>8.0f}"
                    f" {f['mb_per_s']:>7.1f} {f['rss_rise_mib']:>20.1f}"
                )
        finally:
            process.terminate()
            process.wait()


if __name__ == "__main__":
    main()
