"""Search and reveal over HTTP with 32 concurrent clients, on SQLite and PostgreSQL, next to a trivial
endpoint of the same app (the framework's ceiling on this machine).

    .venv/bin/python -m bench.catalogue_build            # once: the 1,000,000-contact catalogues
    .venv/bin/python -m bench.http_load [--duration 20] [--connections 32] [--workers 2] [--scenarios …]

Needs `wrk` (Debian package wrk). Goals: search p99 ≤ 50 ms and ≥ 1,000 requests/s;
reveal ≥ 500/s with an exact ledger.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import httpx
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import create_async_engine

from bench.common import BENCH_DIR, catalogue_urls
from vpx.config import Settings
from vpx.db import Database
from vpx.models import Account, Contact, LedgerEntry, Reveal, SearchTerm

HERE = Path(__file__).resolve().parent
VPX = str(Path(sys.executable).with_name("vpx"))


def parse_wrk(output: str) -> dict[str, float]:
    def latency(label: str) -> float:
        match = re.search(rf"^\s*{label}%\s+([\d.]+)(us|ms|s)\s*$", output, re.M)
        if not match:
            return float("nan")
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rps = re.search(r"Requests/sec:\s+([\d.]+)", output)
    total = re.search(r"(\d+) requests in", output)
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    return {
        "rps": float(rps.group(1)) if rps else float("nan"),
        "p50": latency("50"),
        "p99": latency("99"),
        "requests": float(total.group(1)) if total else 0.0,
        "non_2xx": float(bad.group(1)) if bad else 0.0,
    }


def run_wrk(port: int, script: str, duration: int, connections: int, env: dict[str, str]) -> dict[str, float]:
    command = [
        "wrk", f"-t{min(2, connections)}", f"-c{connections}", f"-d{duration}s", "--latency",
        "-s", str(HERE / "wrk" / script), f"http://127.0.0.1:{port}",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **env}, check=True)
    return parse_wrk(done.stdout)


async def prepare(url: str, accounts: int = 1) -> tuple[list[str], list[str], int]:
    """Bench accounts with large balances and a Full Access key each; the catalogue's highest id."""
    from vpx.accounts import service as account_service
    from vpx.auth import service as key_service
    from vpx.auth.keys import KeyType
    from vpx.clock import Clock
    from vpx.credits import service as credit_service

    settings = Settings(database_url=url)
    database = Database(settings, pool=False)
    now = Clock().now()
    account_ids, secrets = [], []
    async with database.write_sessions() as session, session.begin():
        for _ in range(accounts):
            account = await account_service.create_account(
                session, name="bench", email=None, plan="free", now=now, settings=settings
            )
            await credit_service.add_credits(
                session, account_id=account.id, amount=Decimal(10_000_000), kind="grant", reference=None,
                description="bench", now=now, settings=settings,
            )  # fmt: skip
            _, secret = await key_service.create_key(
                session, account_id=account.id, key_type=KeyType.full, name="bench", ip_allowlist=[],
                now=now, settings=settings,
            )  # fmt: skip
            account_ids.append(account.id)
            secrets.append(secret)
    async with database.read_sessions() as session:
        max_id = int(await session.scalar(select(func.max(Contact.id))) or 0)
    await database.dispose()
    return account_ids, secrets, max_id


async def ledger_is_exact(url: str, account_ids: list[str]) -> tuple[bool, int]:
    """Every account's ledger sums to its balance and has one reveal entry per revealed contact."""
    exact, reveals = True, 0
    for account_id in account_ids:
        ok, count = await _ledger_is_exact(url, account_id)
        exact, reveals = exact and ok, reveals + count
    return exact, reveals


async def _ledger_is_exact(url: str, account_id: str) -> tuple[bool, int]:
    database = Database(Settings(database_url=url), pool=False)
    async with database.read_sessions() as session:
        total = await session.scalar(select(func.sum(LedgerEntry.amount)).where(LedgerEntry.account_id == account_id))
        balance = (
            await session.execute(select(Account.free_credits, Account.paid_credits).where(Account.id == account_id))
        ).one()
        reveals = await session.scalar(select(func.count()).select_from(Reveal).where(Reveal.account_id == account_id))
        charged = await session.scalar(
            select(func.count())
            .select_from(LedgerEntry)
            .where(LedgerEntry.account_id == account_id, LedgerEntry.kind == "reveal")
        )
    await database.dispose()
    exact = Decimal(total or 0) == balance[0] + balance[1] and reveals == charged
    return exact, int(reveals or 0)


def serve(url: str, port: int, workers: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "VPX_DATABASE_URL": url,
        "VPX_RATE_LIMIT": "100000000/minute",
        "VPX_LOG_LEVEL": "WARNING",
    }
    # Without the background worker: on a freshly built catalogue its jobs (every email's first check,
    # the search changes they make) would write throughout the run; the figures are the API's own.
    process = subprocess.Popen(
        [VPX, "serve", "--no-worker", "--port", str(port), "--workers", str(workers)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RuntimeError("server did not start")


def server_memory(process: subprocess.Popen[bytes]) -> list[int]:
    """Resident memory (MB) of each process of the server's group (the supervisor and its workers)."""
    sizes = []
    for status in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = status.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) != process.pid:  # the process group
                continue
            rss = next(
                line for line in (status.parent / "status").read_text().splitlines() if line.startswith("VmRSS:")
            )
        except (OSError, ValueError, IndexError, StopIteration):
            continue
        sizes.append(int(rss.split()[1]) // 1024)
    return sorted(sizes, reverse=True)


def stop(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)


async def long_tail_words(url: str, count: int, seed: int = 7) -> Path:
    """``count`` words of the catalogue's vocabulary, drawn at random (seeded), one per line."""
    import random

    database = Database(Settings(database_url=url), pool=False)
    async with database.read_sessions() as session:
        terms = list((await session.scalars(select(SearchTerm.term).where(func.length(SearchTerm.term) >= 4))).all())
    await database.dispose()
    random.Random(seed).shuffle(terms)
    path = BENCH_DIR / "long_tail_words.txt"
    path.write_text("\n".join(sorted(terms[:count])) + "\n")
    return path


async def vacuum(url: str) -> None:
    """PostgreSQL: the tables the load writes, vacuumed first. This machine's server runs with
    autovacuum off; without it the bench accounts' rows carried thousands of dead versions from
    earlier runs and each reveal cost PostgreSQL 2 ms of CPU instead of 0.6 ms."""
    engine = create_async_engine(url, isolation_level="AUTOCOMMIT")
    async with engine.connect() as connection:
        await connection.execute(text("VACUUM (ANALYZE) accounts, api_keys, reveals, ledger_entries, search_terms"))
    await engine.dispose()


SCENARIOS = {
    # name: (wrk script, what it measures)
    "search-cold": ("search.lua", "the 40 searches × 11 state choices, caches empty (server just started)"),
    "search": ("search.lua", "the same searches once each process has answered them (warm caches)"),
    "search-tail": ("search_diverse.lua", "a word from 5,000 of the catalogue's words: nearly every search new"),
    "reveal": ("reveal.lua", "reveals of random contacts over the bench accounts"),
    "ceiling": ("ceiling.lua", "GET /healthz"),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--duration", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=20, help="seconds of searches before the warm run")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--accounts", type=int, default=16, help="accounts the reveals are spread over")
    parser.add_argument("--count", type=int, default=1_000_000, help="which catalogue (its size)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="in this order (search-cold first)")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install wrk")
    urls = catalogue_urls(args.count)
    names = [n for n in args.scenarios.split(",") if n]
    rows = []
    memory: dict[str, list[int]] = {}
    for backend in args.backends.split(","):
        url = urls[backend]
        account_ids, keys, max_id = asyncio.run(prepare(url, args.accounts))
        if backend == "postgresql":
            asyncio.run(vacuum(url))
        words = asyncio.run(long_tail_words(url, 5_000))
        env = {
            "VPX_BENCH_KEY": keys[0],
            "VPX_BENCH_KEYS": ",".join(keys),
            "VPX_BENCH_MAX_ID": str(max_id),
            "VPX_BENCH_WORDS": str(words),
        }
        server = serve(url, args.port, args.workers)
        results = {}
        try:
            for name in names:
                if name == "search" and args.warmup:
                    run_wrk(args.port, "search.lua", args.warmup, args.connections, env)
                results[name] = run_wrk(args.port, SCENARIOS[name][0], args.duration, args.connections, env)
            memory[backend] = server_memory(server)
        finally:
            stop(server)
        exact, reveals = asyncio.run(ledger_is_exact(url, account_ids))
        for name, figures in results.items():
            ceiling = results["ceiling"]["rps"] if "ceiling" in results else float("nan")
            rows.append((backend, name, figures, figures["rps"] / ceiling))
        rows.append((backend, "ledger", {"exact": exact, "reveals": reveals}, 0.0))
    print(
        f"HTTP load: {args.connections} connections, {args.workers} server processes, {args.duration} s each "
        f"({args.warmup} s of searches before the warm run), reveals over {args.accounts} accounts"
    )
    for name in names:
        print(f"  {name:<12} {SCENARIOS[name][1]}")
    print(f"{'database':<11}{'scenario':<13}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}{'non-2xx':>9}{'of ceiling':>12}")
    for backend, name, figures, ratio in rows:
        if name == "ledger":
            print(f"{backend:<11}ledger       exact={figures['exact']} reveals={figures['reveals']}")
            continue
        print(
            f"{backend:<11}{name:<13}{figures['rps']:>9.0f}{figures['p50']:>9.1f}{figures['p99']:>9.1f}"
            f"{figures['non_2xx']:>9.0f}{ratio:>11.0%}"
        )
    for backend, sizes in memory.items():
        print(f"{backend:<11}resident memory of the server's processes after the run: {sizes} MB")


if __name__ == "__main__":
    main()
