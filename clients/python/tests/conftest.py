"""Fixtures: the real service, in process (httpx's ASGI transport) and as a live `vpx serve`.

The server's own test helpers (``tests.conftest``, ``tests.factories``) come from the repository
this client lives in; the databases are SQLite files in a temporary directory.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

REPO = Path(__file__).resolve().parents[3]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # the service's test helpers: tests.conftest, tests.factories

from fastapi import FastAPI  # noqa: E402
from tests.conftest import migrate, test_settings  # noqa: E402
from tests.factories import Factory  # noqa: E402
from vpx.app import create_app  # noqa: E402
from vpx.clock import Clock  # noqa: E402

from client_support import ADMIN_TOKEN, LiveServer, Seed, free_port, live_server, seed_demo  # noqa: E402
from vpx_client import AsyncClient  # noqa: E402

# Fast retries for the in-process tests: the waits are recorded in `meta.retries`, never timed.
FAST = {"backoff": 0.01, "max_backoff": 0.05}


@pytest.fixture(scope="session")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('inprocess') / 'vpx.db'}"
    migrate(url)
    return url


@pytest.fixture(scope="session")
async def app(database_url: str) -> AsyncIterator[FastAPI]:
    """One application for the in-process tests; each test makes accounts of its own."""
    settings = test_settings(
        database_url,
        admin_token=ADMIN_TOKEN,
        # Nothing is delivered in process (no worker): loopback targets just pass the URL checks.
        webhook_allow_private=True,
        mailbox_allow_private=True,
        # No DNS server: reverse look-ups of visitor addresses fail at once.
        dns_servers="127.0.0.1:9",
        dns_timeout_seconds=0.2,
    )
    application = create_app(settings, clock=Clock())
    yield application
    await application.state.database.dispose()


@pytest.fixture(scope="session")
def factory(app: FastAPI) -> Factory:
    return Factory(app, Clock())  # type: ignore[arg-type]  # the real clock is enough here


def asgi(app: FastAPI) -> httpx.AsyncBaseTransport:
    return httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))


@pytest.fixture
def connect(app: FastAPI) -> Iterator[Any]:
    """``connect(key, **options)``: an AsyncClient on the in-process app (closed after the test)."""
    made: list[AsyncClient] = []

    def make(key: str, *, transport: httpx.AsyncBaseTransport | None = None, **options: Any) -> AsyncClient:
        client = AsyncClient(key, base_url="http://testserver", transport=transport or asgi(app), **{**FAST, **options})
        made.append(client)
        return client

    yield make


async def ingest(client: httpx.AsyncClient, events: list[dict[str, Any]]) -> list[str]:
    """Signals through the operator's admin API (D36); returns their ids."""
    answer = await client.post("/api/v1/admin/signals", json=events, headers={"X-Admin-Token": ADMIN_TOKEN})
    assert answer.status_code in (200, 201), answer.text
    ids: list[str] = answer.json()["signal_ids"]
    return ids


@pytest.fixture
async def admin(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=asgi(app), base_url="http://testserver") as http:
        yield http


# --- The live server ---


@pytest.fixture(scope="session")
def seed(tmp_path_factory: pytest.TempPathFactory) -> Seed:
    """A SQLite database with the demo catalogue and the demo account's keys (`vpx demo --json`)."""
    return seed_demo(tmp_path_factory.mktemp("live") / "vpx.db")


@pytest.fixture(scope="session")
def demo_mail_port() -> int:
    return free_port()


@pytest.fixture(scope="session")
def server(seed: Seed, demo_mail_port: int) -> Iterator[LiveServer]:
    """`vpx serve` on a free loopback port. Stream connections last 2 s (the client must resume),
    webhooks may target loopback, the worker looks for due deliveries every 0.1 s; the demo's mail
    catcher runs, as under make serve."""
    with live_server(
        seed,
        STREAM_MAX_SECONDS="2",
        STREAM_POLL_SECONDS="0.1",
        WEBHOOK_ALLOW_PRIVATE="1",
        WORKER_POLL_SECONDS="0.1",
        DEMO_MAIL_PORT=str(demo_mail_port),
    ) as running:
        yield running
