"""The sandbox made by two processes' first test keys at once: one makes it (migrated, loaded), the
other waits and finds it made; the catalogue is loaded once."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from sqlalchemy import func, select

from tests.conftest import START, create_postgres_database, drop_postgres_database, test_settings
from vpx.auth.ratelimit import RateLimits
from vpx.clock import FixedClock
from vpx.db import Database
from vpx.models import Contact
from vpx.sandbox import catalogue
from vpx.sandbox.world import Sandbox


@pytest.fixture
def fresh_sandbox_url(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A sandbox URL where no sandbox is yet (a new file, or a PostgreSQL database name not made)."""
    if database_url.startswith("sqlite"):
        yield f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('fresh') / 'vpx-sandbox.db'}"
        return
    made = asyncio.run(create_postgres_database())
    asyncio.run(drop_postgres_database(made))  # a name free on the server: the sandbox makes it
    yield made
    asyncio.run(drop_postgres_database(made))


async def test_two_processes_make_the_sandbox_once(database_url: str, fresh_sandbox_url: str) -> None:
    settings = test_settings(database_url, sandbox_database_url=fresh_sandbox_url)
    mains = [Database(settings), Database(settings)]
    sandboxes = [Sandbox(main, settings, clock=FixedClock(START), rate_limits=RateLimits(settings)) for main in mains]
    try:
        await asyncio.gather(*(sandbox.ready() for sandbox in sandboxes))
        async with sandboxes[0].database.read_sessions() as session:
            assert await session.scalar(select(func.count()).select_from(Contact)) == catalogue.CONTACTS
    finally:
        for sandbox in sandboxes:
            await sandbox.stop()
        for main in mains:
            await main.dispose()
