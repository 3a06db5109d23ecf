"""Test mode's fixtures: a sandbox database of each backend, made, migrated and loaded once per session
(as the first test key makes it), beside the session's main database."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from tests import factories
from tests.conftest import (
    START,
    asgi_client,
    create_postgres_database,
    drop_postgres_database,
    test_settings,
    wipe,
)
from tests.factories import Factory
from tests.webhooks.support import receiver
from vpx.app import create_app
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.sandbox.world import Sandbox

__all__ = ["receiver", "test_keys"]


@pytest.fixture(scope="session")
def sandbox_url(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A sandbox made and loaded once (its catalogue is the same for every account)."""
    if database_url.startswith("sqlite"):
        url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('sandbox') / 'vpx-sandbox.db'}"
    else:
        url = asyncio.run(create_postgres_database())
    settings = test_settings(database_url, sandbox_database_url=url)

    async def make() -> None:
        from vpx.auth.ratelimit import RateLimits
        from vpx.db import Database

        main = Database(settings)
        sandbox = Sandbox(main, settings, clock=FixedClock(START), rate_limits=RateLimits(settings))
        try:
            await sandbox.ready()
        finally:
            await sandbox.stop()
            await main.dispose()

    asyncio.run(make())
    yield url
    if not database_url.startswith("sqlite"):
        asyncio.run(drop_postgres_database(url))


def sandbox_settings(database_url: str, sandbox_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "sandbox_database_url": sandbox_url,
        "sandbox_feed_seconds": 0,
        "webhook_allow_private": True,
        "webhook_retry_jitter": 0.0,
        "worker_in_process": False,
    }
    values.update(overrides)
    return test_settings(database_url, **values)


@pytest.fixture
def settings(database_url: str, sandbox_url: str) -> Settings:
    return sandbox_settings(database_url, sandbox_url)


@pytest.fixture
async def app(settings: Settings, clock: FixedClock) -> AsyncIterator[FastAPI]:
    application = create_app(settings, clock=clock)
    await wipe(application.state.database)
    yield application
    await application.state.sandbox.stop()
    await application.state.database.dispose()


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(app) as http:
        yield http


async def test_keys(client: httpx.AsyncClient, account: factories.TestAccount) -> dict[str, str]:
    """A test key of each type for ``account``, made through the keys API with its live Full key."""
    keys = {}
    for key_type in ("ro", "live", "full"):
        response = await client.post(
            "/api/v1/keys",
            json={"type": key_type, "mode": "test", "name": f"test {key_type}"},
            headers=account.headers("full"),
        )
        assert response.status_code == 201, response.text
        keys[key_type] = response.json()["secret"]
    return keys


test_keys.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


@pytest.fixture
def factory(app: FastAPI, clock: FixedClock) -> Factory:
    return Factory(app, clock)


@pytest.fixture
async def served(app: FastAPI) -> AsyncIterator[str]:
    """The app served over real HTTP on a loopback port (its lifespan run), for as long as the test."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    await asyncio.wait_for(task, timeout=15)
