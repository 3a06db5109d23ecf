"""Templates over their budget against a real running `vpx serve`: while several clients post
sequences whose templates go over (nested ranges, huge powers, repetitions, format widths, heavy
loops up to the time limit), every one is refused (422) and `/healthz` keeps answering the whole
time. How long it waits is measured by bench/template_budget.py (docs/benchmarks.md), not asserted
here."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.factories import Factory
from tests.faults.support import VpxServer

pytestmark = pytest.mark.slow
SERVER_SETTINGS = {"mailbox_allow_private": "1", "worker_in_process": "false"}
HEAVY = (
    "{% set a = range(9000)|list %}{% set b = range(9000)|list %}"
    "{% for i in range(4400) %}{% if a == b %}{% endif %}{% endfor %}ok"
)
OVER = [
    "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}x",
    "{{ 9**(9**9) }}",
    "{{ 10**10000000 }}",
    "{{ 'x' * 30000000 }}",
    "{{ '%999999999d' % 1 }}",
    "{{ '{:>999999999}'.format(1) }}",
    "{% set a = [1] * 1000 %}{% set b = [a] * 1000 %}{% set c = [b] * 1000 %}{{ c }}",
]


def body(mailbox_id: str, *bodies: str) -> dict[str, Any]:
    steps = [{"type": "email", "subject": "Hello", "body": text} for text in bodies]
    return {"name": "over budget", "mailbox_id": mailbox_id, "steps": steps}


async def test_healthz_answers_while_templates_over_budget_are_refused(
    factory: Factory, database_url: str, tmp_path: Path
) -> None:
    account = await factory.account()
    server = VpxServer(database_url, tmp_path / "server.log", SERVER_SETTINGS)
    try:
        async with httpx.AsyncClient(base_url=server.url, headers=account.headers("full"), timeout=60) as http:
            created = await http.post(
                "/api/v1/mailboxes",
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
            bodies = [body(mailbox_id, template) for template in OVER] + [body(mailbox_id, HEAVY, OVER[1])]
            answers: list[int] = []
            health: list[int] = []
            posting = True

            async def attacker(offset: int) -> None:
                for n in range(len(bodies)):
                    response = await http.post("/api/v1/sequences", json=bodies[(n + offset) % len(bodies)])
                    answers.append(response.status_code)

            async def poller() -> None:
                async with httpx.AsyncClient(base_url=server.url, timeout=10) as probe:
                    while posting:
                        health.append((await probe.get("/healthz")).status_code)
                        await asyncio.sleep(0.02)

            polling = asyncio.create_task(poller())
            started = time.monotonic()
            await asyncio.gather(*(attacker(offset) for offset in (0, 4)))
            posting = False
            await polling
            took = time.monotonic() - started
            assert answers == [422] * (2 * len(bodies)), answers
            # The server answered /healthz throughout: about one answer per 20 ms poll, never an error.
            assert health and set(health) == {200}, health
            assert len(health) >= took / 0.02 / 4, (len(health), took)
            listed = await http.get("/api/v1/sequences")
            assert listed.json()["sequences"] == []
    finally:
        exit_code = server.stop()
    # uvicorn re-raises the SIGTERM it handled once it has shut down cleanly.
    assert exit_code in (0, -signal.SIGTERM), server.output()
