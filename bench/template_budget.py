"""How long `/healthz` waits while a running `vpx serve` is sent sequences whose templates go over
their budget (vpx.sequences.templates), on SQLite (default) or PostgreSQL, a fresh database each run:

    .venv/bin/python -m bench.template_budget [--database sqlite|postgresql] [--seconds 20]
        [--attackers 4] [--poll-ms 10]

A real `vpx serve` (one process, worker in process) is started on a free port. A poller in a process
of its own asks `/healthz` every --poll-ms over one kept connection and times each answer: first with
nothing else going on (the baseline), then for --seconds while --attackers clients each post, one
after the other, sequences of the kinds below, every one of which must be refused (422):

- amplifiers: one step whose body is one of the constructs a template could blow up with (nested
  ranges, 'x' * 30,000,000, 9**(9**9), 10**10000000, format widths, center/ljust/indent widths, a
  list of lists of lists written out, join and replace sizes…);
- heavy then over: 19 steps whose bodies compare two 9,000-item lists in a loop (legal, but as slow as
  the time limit lets them be), then one over its budget: the most a sequence's check can cost
  (MAX_CHECK_SECONDS);
- large then over: 19 steps of bodies at the parts limit (MAX_PARTS: the longest compile), then one
  over its budget.

Printed: the baseline's and the attack's /healthz answer times (p50, p99, max, in ms), their
difference (the delay the attack adds), the posts made and their answers. Goal: the attack adds at
most 50 ms to any /healthz answer (max under attack minus the baseline's p50).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx
from cryptography.fernet import Fernet

from bench.common import fresh_database, percentile
from vpx.accounts import service as account_service
from vpx.app import create_app
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.config import Settings

GOAL_DELAY_MS = 50.0
DB_NAME = "vpx_bench_template_budget"

AMPLIFIERS = [
    "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}x",
    "{{ 'x' * 30000000 }}",
    "{{ 9**(9**9) }}",
    "{{ 10**10000000 }}",
    "{{ '{:>999999999}'.format(1) }}",
    "{{ '%999999999d' % 1 }}",
    "{{ 'x'|center(999999999) }}",
    "{{ 'x'.ljust(999999999) }}",
    "{{ 'x'|indent(999999999) }}",
    "{% set a = [1] * 1000 %}{% set b = [a] * 1000 %}{% set c = [b] * 1000 %}{{ c }}",
    "{{ range(10000)|join('x' * 100000) }}",
    "{{ ('x' * 1000)|replace('', 'y' * 1000) }}",
    "{{ range(10**6)|length }}",
    "{% for i in range(1000) %}{{ 'x' * 1000 }}{% endfor %}",
    "{% include 'x' %}",
]
HEAVY = (
    "{% set a = range(9000)|list %}{% set b = range(9000)|list %}"
    "{% for i in range(4400) %}{% if a == b %}{% endif %}{% endfor %}ok"
)
LARGE = "Hello {{ contact.city }}, " * 160  # about the parts limit, and valid
OVER = "{{ 'x' * 30000000 }}"


def sequences(
    mailbox_id: str, n: int, kinds: tuple[str, ...] = ("amplifiers", "heavy", "large")
) -> list[dict[str, Any]]:
    """One body of each kind of attack, in turn; the large ones written anew each time (``n``), so
    that each is compiled (compiled templates are cached by their text)."""

    def body(*bodies: str) -> dict[str, Any]:
        steps = [{"type": "email", "subject": "Hello", "body": text} for text in bodies]
        return {"name": "attack", "mailbox_id": mailbox_id, "steps": steps}

    chosen: list[dict[str, Any]] = []
    if "control" in kinds:
        # The same requests' work but the templates': one plain step, refused for its mailbox.
        chosen.append({**body("Hello {{ contact.city }}"), "mailbox_id": "mbx_none"})
    if "amplifiers" in kinds:
        chosen += [body(text) for text in AMPLIFIERS]
    if "heavy" in kinds:
        chosen.append(body(*[HEAVY] * 19, OVER))
    if "large" in kinds:
        chosen.append(body(*[f"{LARGE}{n}.{i}" for i in range(19)], OVER))
    return chosen


# --- The poller (a process of its own, so that its timing takes no GIL from the attackers) ---


def poll(url: str, every: float, pipe: Connection) -> None:
    """Times /healthz every ``every`` seconds until told to stop; sends back the times (seconds)."""
    times: list[float] = []
    failures = 0
    with httpx.Client(base_url=url, timeout=30) as http:
        http.get("/healthz")
        pipe.send("ready")
        while not pipe.poll():
            started = time.perf_counter()
            try:
                ok = http.get("/healthz").status_code == 200
            except httpx.HTTPError:
                ok = False
            elapsed = time.perf_counter() - started
            if ok:
                times.append(elapsed)
            else:
                failures += 1
            time.sleep(max(0.0, every - elapsed))
    pipe.send((times, failures))


def timed(url: str, seconds: float, every: float, during: Any = None) -> tuple[list[float], int, Any]:
    """/healthz answer times over ``seconds`` (while ``during``, a coroutine, runs)."""
    mine, theirs = multiprocessing.Pipe()
    poller = multiprocessing.get_context("spawn").Process(target=poll, args=(url, every, theirs))
    poller.start()
    assert mine.recv() == "ready"
    result = None
    if during is not None:
        result = asyncio.run(during)
    else:
        time.sleep(seconds)
    mine.send("stop")
    times, failures = mine.recv()
    poller.join()
    return times, failures, result


# --- Set-up and the attack ---


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def full_key(url: str) -> str:
    settings = Settings(database_url=url)
    app = create_app(settings)
    now = datetime.now(UTC)
    async with app.state.database.write_sessions() as session, session.begin():
        account = await account_service.create_account(
            session, name="bench", email=None, plan="free", now=now, settings=settings
        )
        _, key = await key_service.create_key(
            session,
            account_id=account.id,
            key_type=KeyType.full,
            name="bench",
            ip_allowlist=[],
            now=now,
            settings=settings,
        )
    await app.state.database.dispose()
    return key


async def attack(
    url: str, key: str, mailbox_id: str, seconds: float, attackers: int, kinds: tuple[str, ...]
) -> Counter[str]:
    answers: Counter[str] = Counter()
    ends = time.monotonic() + seconds

    async def one(offset: int) -> None:
        async with httpx.AsyncClient(base_url=url, headers={"X-API-Key": key}, timeout=60) as http:
            n = offset
            while time.monotonic() < ends:
                bodies = sequences(mailbox_id, n, kinds)
                response = await http.post("/api/v1/sequences", json=bodies[n % len(bodies)])
                answers[str(response.status_code)] += 1
                n += 1

    await asyncio.gather(*(one(i * 5) for i in range(attackers)))
    return answers


def summary(name: str, times: list[float]) -> str:
    ms = [t * 1000 for t in times]
    return (
        f"{name:>9}: {len(ms):5} answers  p50 {percentile(ms, 50):6.1f} ms  p99 {percentile(ms, 99):6.1f} ms  "
        f"max {max(ms):6.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--attackers", type=int, default=4)
    parser.add_argument("--poll-ms", type=float, default=10.0)
    parser.add_argument(
        "--kinds",
        nargs="+",
        choices=("control", "amplifiers", "heavy", "large"),
        default=["amplifiers", "heavy", "large"],
    )
    args = parser.parse_args()

    url = fresh_database(args.database, DB_NAME)
    key = asyncio.run(full_key(url))
    port = free_port()
    server_url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "VPX_DATABASE_URL": url,
        "VPX_SECRET_KEYS": Fernet.generate_key().decode(),
        "VPX_MAILBOX_ALLOW_PRIVATE": "1",
        "VPX_RATE_LIMIT": "1000000/minute",
        "VPX_LOG_LEVEL": "WARNING",
    }
    env.pop("VPX_REDIS_URL", None)
    log = tempfile.NamedTemporaryFile(prefix="vpx-template-budget-", suffix=".log", delete=False)  # noqa: SIM115
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
        created = httpx.post(
            f"{server_url}/api/v1/mailboxes",
            headers={"X-API-Key": key},
            json={
                "email": "sam@seller.example",
                "smtp_host": "127.0.0.1",
                "smtp_port": 2525,
                "smtp_security": "none",
                "postal_address": "Seller Inc, 1 Main St, Denver CO 80202",
            },
        )
        assert created.status_code == 201, created.text
        mailbox_id = created.json()["id"]

        print(f"vpx serve ({args.database}), /healthz every {args.poll_ms:g} ms")
        quiet, quiet_failures, _ = timed(server_url, min(args.seconds, 10.0), args.poll_ms / 1000)
        print(summary("baseline", quiet))
        busy, busy_failures, answers = timed(
            server_url,
            args.seconds,
            args.poll_ms / 1000,
            attack(server_url, key, mailbox_id, args.seconds, args.attackers, tuple(args.kinds)),
        )
        print(summary("attack", busy))
        delay = max(t * 1000 for t in busy) - percentile([t * 1000 for t in quiet], 50)
        print(
            f"posts: {sum(answers.values())} ({', '.join(f'{n} x {s}' for s, n in sorted(answers.items()))}) "
            f"by {args.attackers} clients in {args.seconds:g} s; /healthz failures: {quiet_failures + busy_failures}"
        )
        print(
            f"delay added (attack max - baseline p50): {delay:.1f} ms; "
            f"p99 added: {percentile([t * 1000 for t in busy], 99) - percentile([t * 1000 for t in quiet], 50):.1f} ms"
            f" (goal: at most {GOAL_DELAY_MS:g} ms)"
        )
        if set(answers) != {"422"}:
            raise SystemExit(f"an over-budget sequence was not refused: {dict(answers)}; see {log.name}")
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    main()
