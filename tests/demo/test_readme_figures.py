"""The README's tour answers the same on both databases: the demo is built here as `vpx demo` builds it
(12,000 contacts, seed 42, a month of 1,200 signals, the demo account with its 500 credits), and the
tour's requests that need neither the worker nor the live feed (search, reveal, account, ledger, the
month's signals, enrichment's dry run, errors) are asked of it in process, each answer compared with the
one the README shows, value by value (tests/shown.py). tests/test_readme_tour.py runs the whole tour
with the real curl against `vpx serve` as `make serve` starts it, on SQLite; this runs its share on
PostgreSQL too."""

from __future__ import annotations

import json
import shlex
from decimal import Decimal

import httpx
import pytest
from fastapi import FastAPI

from tests.shown import answer_problems
from tests.test_readme_tour import tour_steps
from vpx.demo import service as demo_service
from vpx.demo import signals as demo_signals

# `vpx demo`'s defaults.
DEMO_CONTACTS, DEMO_SEED, DEMO_GRANT = 12_000, 42, Decimal(500)
# The tour's steps that need the worker, the live feed, the mail catcher or an earlier step's ids.
NEEDS_A_SERVER = ("signals/stream", "/purchase", "auto-buy", "mailboxes", "sequences", "visitors")

pytestmark = pytest.mark.asyncio


def _request(command: str, keys: dict[str, str]) -> tuple[str, str, dict[str, str], bytes | None]:
    """A README curl command as (method, path, headers, body)."""
    for name, value in keys.items():
        command = command.replace(f"${name}", value)
    words = shlex.split(command.replace("\\\n", " "), comments=True)
    method, headers, body, url = "GET", {}, None, ""
    at = 1
    while at < len(words):
        word = words[at]
        if word == "-X":
            method, at = words[at + 1], at + 2
        elif word == "-H":
            name, _, value = words[at + 1].partition(":")
            headers[name.strip()] = value.strip()
            at += 2
        elif word == "-d":
            body, at = words[at + 1].encode(), at + 2
            method = "POST" if method == "GET" else method
        elif word.startswith("-"):
            at += 1
        else:
            url, at = word, at + 1
    return method, url, headers, body


async def test_the_readme_tours_answers_are_the_demos_on_either_database(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    database, now, settings = app.state.database, app.state.clock.now(), app.state.settings
    await demo_service.load_demo_catalogue(
        database, count=DEMO_CONTACTS, seed=DEMO_SEED, search=app.state.search, now=now
    )
    count = demo_signals.default_signal_count(DEMO_CONTACTS)
    await demo_signals.load_demo_signals(database, count=count, seed=DEMO_SEED, now=now, settings=settings)
    issued = await demo_service.issue_demo_account(database, now=now, settings=settings, grant=DEMO_GRANT)
    keys = {"KEY": issued.secrets["live"], "FULL": issued.secrets["full"], "API": "/api/v1"}
    compared = 0
    for step in tour_steps():
        if any(part in step.command for part in NEEDS_A_SERVER) or not step.shown:
            continue
        method, url, headers, body = _request(step.command, keys)
        answer = await client.request(method, url, headers=headers, content=body)
        problems = answer_problems(step.shown, answer.status_code, dict(answer.headers), answer.text)
        where = f"\n{step.command}\n→ {answer.status_code} {answer.text[:600]}"
        assert not problems, "\n".join(problems) + where
        compared += 1
        if answer.headers.get("content-type", "").startswith("application/json") and answer.content:
            json.loads(answer.content)
    assert compared >= 8, compared
