"""Test fixtures: every test that takes ``app`` or ``client`` runs once on SQLite and once on the
machine's PostgreSQL (skipped, with the reason, where PostgreSQL is unreachable).

Set VPX_TEST_BACKENDS=sqlite (or postgresql) to run on one database only, and
VPX_TEST_POSTGRES_URL to point at another server (default postgresql://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from tests.factories import Factory
from tests.plain_words import problem_offences
from vpx.app import create_app
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.db import Base, Database

POSTGRES_ADMIN_URL = os.environ.get("VPX_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
BACKENDS = [b.strip() for b in os.environ.get("VPX_TEST_BACKENDS", "sqlite,postgresql").split(",") if b.strip()]


def _shared_data() -> Path:
    """The real registry samples: $VPX_SHARED_DATA, else ../shared/data beside the checkout, else the
    workplace's /work/shared/data. Tests that need them skip, saying so, when none exists."""
    candidates = [Path(os.environ["VPX_SHARED_DATA"])] if os.environ.get("VPX_SHARED_DATA") else []
    candidates += [Path(__file__).resolve().parents[2] / "shared" / "data", Path("/work/shared/data")]
    return next((path for path in candidates if path.is_dir()), candidates[0])


SHARED_DATA = _shared_data()
START = datetime(2026, 11, 15, 12, 0, tzinfo=UTC)
# A Fernet key for the tests' sealed secrets (a test value, sealing nothing real).
TEST_SECRET_KEY = "iU-A_8wuCLlpPOQMs6T-0CdF2CeDSoT9utja-yhfznc="


def _async_pg(url: str) -> str:
    return url.replace("postgresql://", "postgresql+asyncpg://", 1)


async def _postgres_reachable() -> str | None:
    engine = create_async_engine(_async_pg(POSTGRES_ADMIN_URL), isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
        return None
    except Exception as exc:  # any failure means: skip the PostgreSQL half, saying why
        return f"PostgreSQL not reachable at {POSTGRES_ADMIN_URL}: {type(exc).__name__}: {exc}"[:300]
    finally:
        await engine.dispose()


async def create_postgres_database() -> str:
    name = f"vpx_test_{uuid.uuid4().hex[:10]}"
    engine = create_async_engine(_async_pg(POSTGRES_ADMIN_URL), isolation_level="AUTOCOMMIT")
    async with engine.connect() as conn:
        await conn.execute(text(f'CREATE DATABASE "{name}"'))
    await engine.dispose()
    base = POSTGRES_ADMIN_URL.rsplit("/", 1)[0]
    return _async_pg(f"{base}/{name}")


async def drop_postgres_database(url: str) -> None:
    """Drops the database, and the sandbox a test key may have made beside it (vpx.sandbox)."""
    name = url.rsplit("/", 1)[1]
    engine = create_async_engine(_async_pg(POSTGRES_ADMIN_URL), isolation_level="AUTOCOMMIT")
    async with engine.connect() as conn:
        await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}_sandbox" WITH (FORCE)'))
    await engine.dispose()


def migrate(url: str) -> None:
    from vpx.migrations import upgrade

    upgrade(Settings(database_url=url))


@pytest.fixture(scope="session", params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A migrated, empty database of each backend, shared by the session's tests."""
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("db") / "vpx.db"
        url = f"sqlite+aiosqlite:///{path}"
        migrate(url)
        yield url
        return
    reason = asyncio.run(_postgres_reachable())
    if reason:
        pytest.skip(reason)
    url = asyncio.run(create_postgres_database())
    migrate(url)
    yield url
    asyncio.run(drop_postgres_database(url))


@pytest.fixture(params=BACKENDS)
def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database of each backend of its own, with no tables yet (for migration tests: they upgrade it
    to an older revision themselves)."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path}/old.db"
        return
    reason = asyncio.run(_postgres_reachable())
    if reason:
        pytest.skip(reason)
    url = asyncio.run(create_postgres_database())
    yield url
    asyncio.run(drop_postgres_database(url))


def test_settings(database_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": database_url,
        "rate_limit": "100000/minute",
        "auth_failure_rate_limit": "100000/minute",
        "log_level": "WARNING",
        "redis_url": None,
        # Customer secrets sealed with a key of the tests' own (never the data directory's file).
        "secret_keys": TEST_SECRET_KEY,
    }
    values.update(overrides)
    return Settings(**values)


test_settings.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


async def wipe(database: Database) -> None:
    """Empties every table between tests (and the SQLite vocabulary index with them)."""
    tables = [t.name for t in Base.metadata.sorted_tables]
    async with database.write_engine.begin() as conn:
        if database.is_sqlite:
            # The audit trail refuses deletes (its triggers): set aside while it is emptied.
            triggers = "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'compliance_events'"
            append_only = (await conn.execute(text(triggers))).all()
            for name, _ in append_only:
                await conn.execute(text(f'DROP TRIGGER "{name}"'))
            for name in reversed(tables):
                await conn.execute(text(f'DELETE FROM "{name}"'))
            for _, sql in append_only:
                await conn.execute(text(sql))
            # Deleting contacts logged search changes: gone with the postings they would fold into.
            await conn.execute(text("DELETE FROM search_changes"))
            await conn.execute(text("DELETE FROM search_terms_trgm"))
        else:
            joined = ", ".join(f'"{n}"' for n in tables)
            await conn.execute(text(f"TRUNCATE {joined} RESTART IDENTITY CASCADE"))


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def settings(database_url: str) -> Settings:
    return test_settings(database_url)


@pytest.fixture
async def app(settings: Settings, clock: FixedClock) -> AsyncIterator[FastAPI]:
    application = create_app(settings, clock=clock)
    await wipe(application.state.database)
    yield application
    await application.state.database.dispose()


@pytest.fixture
def backend(database_url: str) -> str:
    return "sqlite" if database_url.startswith("sqlite") else "postgresql"


async def _problems_in_plain_words(response: httpx.Response) -> None:
    """Every problem document a test receives is in plain words (tests/plain_words.py): no decision
    number, Python repr or pydantic phrase reaches a client."""
    if not response.headers.get("content-type", "").startswith("application/problem+json"):
        return
    await response.aread()
    try:
        problem = response.json()
    except ValueError:
        return  # a body that is not JSON is another test's failure to report
    found = problem_offences(problem) if isinstance(problem, dict) else []
    assert not found, f"{response.request.method} {response.request.url.path}: {found}"


def asgi_client(app: FastAPI, *, client_ip: str = "127.0.0.1", **headers: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(client_ip, 50000))
    return httpx.AsyncClient(
        transport=transport,
        base_url="http://testserver",
        headers=headers,
        event_hooks={"response": [_problems_in_plain_words]},
    )


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(app) as http:
        yield http


@pytest.fixture
def factory(app: FastAPI, clock: FixedClock) -> Factory:
    return Factory(app, clock)
