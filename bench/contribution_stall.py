"""How long `/healthz` waits while a running `vpx serve` takes the largest contributions (1,000 rows of
one business name, city and state with different phones: every row a possible duplicate of the
others), on SQLite (default) or PostgreSQL, a fresh database each run:

    .venv/bin/python -m bench.contribution_stall [--database sqlite|postgresql] [--seconds 20]
        [--senders 2] [--poll-ms 10]

A real `vpx serve` is started on a free port; a poller in a process of its own asks `/healthz` every
--poll-ms and times each answer, first alone (the baseline), then for --seconds while --senders
clients each post such contributions one after the other (each request's business and phones new).

Printed: the baseline's and the load's /healthz answer times (p50, p99, max), the delay the load adds
(max under load minus the baseline's p50), the contributions made and how long each took. Goal: at
most 50 ms added. Before the fix, one 1,000-row request held the process for minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from cryptography.fernet import Fernet

from bench.common import fresh_database, percentile
from bench.template_budget import GOAL_DELAY_MS, free_port, full_key, summary, timed

DB_NAME = "vpx_bench_contribution_stall"
ROWS = 1_000


def rows(n: int) -> list[dict[str, Any]]:
    """One business, 1,000 phones: a request's worth of possible duplicates of each other."""
    return [
        {
            "business_name": f"Stall Test Plumbing {n}",
            "phone": f"+1{200 + n % 700:03d}555{i:04d}",
            "city": "Denver",
            "state": "CO",
            "industry": "home-services",
        }
        for i in range(ROWS)
    ]


async def contribute(url: str, key: str, seconds: float, senders: int) -> tuple[Counter[str], list[float]]:
    answers: Counter[str] = Counter()
    took: list[float] = []
    ends = time.monotonic() + seconds

    async def one(offset: int) -> None:
        async with httpx.AsyncClient(base_url=url, headers={"X-API-Key": key}, timeout=600) as http:
            n = offset
            while time.monotonic() < ends:
                started = time.perf_counter()
                response = await http.post("/api/v1/contacts/contribute", json={"contacts": rows(n)})
                took.append(time.perf_counter() - started)
                answers[str(response.status_code)] += 1
                n += senders

    await asyncio.gather(*(one(i) for i in range(senders)))
    return answers, took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--senders", type=int, default=2)
    parser.add_argument("--poll-ms", type=float, default=10.0)
    args = parser.parse_args()

    url = fresh_database(args.database, DB_NAME)
    key = asyncio.run(full_key(url))
    port = free_port()
    server_url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "VPX_DATABASE_URL": url,
        "VPX_SECRET_KEYS": Fernet.generate_key().decode(),
        "VPX_RATE_LIMIT": "1000000/minute",
        "VPX_CONTRIBUTION_ROWS_PER_DAY": "10000000",
        "VPX_LOG_LEVEL": "WARNING",
    }
    env.pop("VPX_REDIS_URL", None)
    log = tempfile.NamedTemporaryFile(prefix="vpx-contribution-stall-", suffix=".log", delete=False)  # noqa: SIM115
    vpx = str(Path(sys.executable).with_name("vpx"))
    server = subprocess.Popen([vpx, "serve", "--port", str(port), "--json"], env=env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{server_url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit(f"vpx serve did not start; see {log.name}")
            time.sleep(0.1)
        # One small contribution first: the process's first database work sets up its layers.
        warm = httpx.post(
            f"{server_url}/api/v1/contacts/contribute",
            headers={"X-API-Key": key},
            json={"contacts": rows(999)[:2]},
            timeout=60,
        )
        assert warm.status_code == 200, warm.text

        print(f"vpx serve ({args.database}), /healthz every {args.poll_ms:g} ms")
        quiet, quiet_failures, _ = timed(server_url, min(args.seconds, 10.0), args.poll_ms / 1000)
        print(summary("baseline", quiet))
        busy, busy_failures, (answers, took) = timed(
            server_url, args.seconds, args.poll_ms / 1000, contribute(server_url, key, args.seconds, args.senders)
        )
        print(summary("load", busy))
        delay = max(t * 1000 for t in busy) - percentile([t * 1000 for t in quiet], 50)
        print(
            f"contributions of {ROWS} rows: {sum(answers.values())} "
            f"({', '.join(f'{n} x {s}' for s, n in sorted(answers.items()))}) by {args.senders} clients, "
            f"each {percentile(took, 50):.2f} s p50, {max(took):.2f} s max; "
            f"/healthz failures: {quiet_failures + busy_failures}"
        )
        print(f"delay added (load max - baseline p50): {delay:.1f} ms (goal: at most {GOAL_DELAY_MS:g} ms)")
        if set(answers) != {"200"}:
            raise SystemExit(f"a contribution failed: {dict(answers)}; see {log.name}")
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    main()
