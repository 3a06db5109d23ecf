"""The SQLite database holds every account's data: its directory and files (the database, its -wal and
-shm files) are the service user's alone, 0700 and 0600, as the secret key file is."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from tests.conftest import START, asgi_client, migrate, test_settings
from tests.factories import Factory
from vpx.app import create_app
from vpx.clock import FixedClock
from vpx.db import Database


@pytest.fixture
def usual_umask() -> Iterator[None]:
    """The common umask 022, under which new files are readable by every user unless made otherwise."""
    before = os.umask(0o022)
    yield
    os.umask(before)


def _modes(directory: Path) -> dict[str, int]:
    return {path.name: stat.S_IMODE(path.stat().st_mode) for path in directory.iterdir()}


async def test_the_database_made_at_start_is_private_after_writes(tmp_path: Path, usual_umask: None) -> None:
    data = tmp_path / "var"
    url = f"sqlite+aiosqlite:///{data}/vpx.db"
    await asyncio.to_thread(migrate, url)  # as `vpx serve` and `vpx db upgrade` do first: the file is made here
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert _modes(data) == {"vpx.db": 0o600}
    clock = FixedClock(START)
    app = create_app(test_settings(url, worker_in_process=False), clock=clock)
    account = await Factory(app, clock).account()  # a write: the -wal and -shm files appear
    async with asgi_client(app) as http:
        assert (await http.get("/api/v1/account", headers=account.headers())).status_code == 200
    # The test-mode sandbox's database (vpx-sandbox.db, made beside it for the account's test keys) is
    # private as well.
    modes = _modes(data)
    assert {name: modes[name] for name in modes if not name.startswith("vpx-sandbox.db")} == {
        "vpx.db": 0o600,
        "vpx.db-wal": 0o600,
        "vpx.db-shm": 0o600,
    }
    assert set(modes.values()) == {0o600}
    await app.state.database.dispose()


async def test_a_database_the_engine_makes_is_private_too(tmp_path: Path, usual_umask: None) -> None:
    data = tmp_path / "nested" / "data"
    database = Database(test_settings(f"sqlite+aiosqlite:///{data}/other.db"))
    async with database.write_engine.begin() as connection:
        await connection.execute(text("CREATE TABLE t (x INTEGER)"))
        await connection.execute(text("INSERT INTO t VALUES (1)"))
        assert _modes(data) == {"other.db": 0o600, "other.db-wal": 0o600, "other.db-shm": 0o600}
    await database.dispose()
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "nested").stat().st_mode) == 0o700


def test_an_existing_directory_keeps_its_mode(tmp_path: Path, usual_umask: None) -> None:
    """Only what the service makes is made private: a directory the operator chose is left as it is."""
    tmp_path.chmod(0o755)
    migrate(f"sqlite+aiosqlite:///{tmp_path}/vpx.db")
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "vpx.db").stat().st_mode) == 0o600
