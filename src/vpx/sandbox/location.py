"""Where the sandbox database is, and making it: a sibling file of a SQLite database, or a database of
its own on the same PostgreSQL server, unless VPX_SANDBOX_DATABASE_URL names one."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from vpx.config import Settings

SQLITE_SUFFIX = "-sandbox"
POSTGRES_SUFFIX = "_sandbox"


def sandbox_url(settings: Settings) -> str:
    """VPX_SANDBOX_DATABASE_URL, else ``vpx-sandbox.db`` beside a SQLite ``vpx.db``, an in-memory
    database beside an in-memory one, or ``<database>_sandbox`` on the same PostgreSQL server."""
    if settings.sandbox_database_url:
        return settings.sandbox_database_url
    if settings.is_sqlite:
        path = settings.sqlite_path()
        if path is None:
            return "sqlite+aiosqlite:///:memory:"
        return f"sqlite+aiosqlite:///{path.with_name(path.stem + SQLITE_SUFFIX + path.suffix)}"
    url = make_url(settings.database_url)
    return url.set(database=f"{url.database}{POSTGRES_SUFFIX}").render_as_string(hide_password=False)


def sandbox_settings(settings: Settings) -> Settings:
    """The service's settings with the sandbox as its database (no replicas: the sandbox has none)."""
    return settings.model_copy(update={"database_url": sandbox_url(settings), "database_replica_urls": []})


async def exists(settings: Settings) -> bool:
    """Whether the sandbox database has been made and migrated (the first test key makes it)."""
    if settings.is_sqlite:
        path = settings.sqlite_path()
        return path is not None and path.exists() and await asyncio.to_thread(_sqlite_migrated, path)
    engine = create_async_engine(settings.database_url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            found = await connection.scalar(text("SELECT to_regclass('alembic_version') IS NOT NULL"))
            return bool(found)
    except Exception:  # no such database (yet), or the server refuses: not made
        return False
    finally:
        await engine.dispose()


def _sqlite_migrated(path: Path) -> bool:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
            row = connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'alembic_version'").fetchone()
            return row is not None
    except sqlite3.Error:
        return False


async def create_database(main: Settings, sandbox: Settings) -> None:
    """Makes the sandbox's PostgreSQL database when it is missing, through a connection to the main
    database's server with its credentials (the role needs CREATEDB); a SQLite file is made by SQLite."""
    if sandbox.is_sqlite:
        return
    target = make_url(sandbox.database_url)
    name = target.database
    # The main database's server when the sandbox is on it, else the sandbox server's own "postgres".
    server = main.database_url
    if main.is_sqlite or (make_url(server).host, make_url(server).port) != (target.host, target.port):
        server = target.set(database="postgres").render_as_string(hide_password=False)
    engine = create_async_engine(server, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            found = await connection.scalar(select_database, {"name": name})
            if found is None:
                quoted = '"' + str(name).replace('"', '""') + '"'
                try:
                    await connection.execute(text(f"CREATE DATABASE {quoted}"))
                except DBAPIError:
                    # Another process made it between the look and the CREATE: what was wanted.
                    if await connection.scalar(select_database, {"name": name}) is None:
                        raise
    finally:
        await engine.dispose()


select_database = text("SELECT 1 FROM pg_database WHERE datname = :name")


@contextlib.asynccontextmanager
async def made_once(sandbox: Settings) -> AsyncIterator[None]:
    """Held while the sandbox is migrated and loaded, by one process at a time (two servers' first test
    keys at once): an advisory lock on PostgreSQL, a lock file beside a SQLite file. The database must
    exist (``create_database``)."""
    if sandbox.is_sqlite:
        path = sandbox.sqlite_path()
        if path is None:  # in memory: one process only
            yield
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = await asyncio.to_thread(open, path.with_name(path.name + ".lock"), "a")
        try:
            await asyncio.to_thread(fcntl.flock, handle, fcntl.LOCK_EX)
            yield
        finally:
            handle.close()  # the lock goes with the file's last descriptor
        return
    key = int.from_bytes(hashlib.sha256(b"vpx sandbox: made once").digest()[:8], "big", signed=True)
    engine = create_async_engine(sandbox.database_url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            await connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": key})
            try:
                yield
            finally:
                await connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
    finally:
        await engine.dispose()


async def migrate(main: Settings, sandbox: Settings) -> None:
    """Brings the sandbox database to the newest schema, as the main one (made first: ``create_database``)."""
    from vpx.migrations import upgrade

    # Alembic runs its own event loop: in a thread of its own.
    await asyncio.to_thread(upgrade, sandbox)
