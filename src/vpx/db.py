"""The declarative base, one engine factory for SQLite and PostgreSQL, and the session dependencies.

Requests get one session each; the dependency commits at the boundary, after the endpoint returns and
before the response is sent, and rolls back on an error. Services only flush.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import stat
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request
from sqlalchemy import BigInteger, DateTime, Integer, MetaData, event
from sqlalchemy.engine import Dialect, Engine, make_url
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.pool import NullPool
from sqlalchemy.types import TypeDecorator

from vpx import sqlite_inline
from vpx.compliance import hashing
from vpx.config import Settings
from vpx.replicas import Replicas

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

T = TypeVar("T")

# An auto-incrementing 64-bit key on PostgreSQL; SQLite only auto-increments INTEGER PRIMARY KEY.
BigIntPK = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


@event.listens_for(Engine, "connect")
def _sql_functions(dbapi_connection: Any, _record: Any) -> None:
    """Every SQLite connection of the process, whichever engine opened it (the service's, a migration's,
    a test's), gets the SQL functions its triggers call: DROP's hashes (vpx.compliance.hashing).
    PostgreSQL's connections have no ``create_function`` and need none (its triggers use sha256())."""
    hashing.register_sqlite_functions(dbapi_connection)


class WriterQueue:
    """An asyncio lock that the task holding it may take again (a request's own short side
    transactions, such as an idempotency claim, run in the task that holds the turn)."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._owner: asyncio.Task[Any] | None = None

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        task = asyncio.current_task()
        if task is not None and self._owner is task:
            yield
            return
        async with self._lock:
            self._owner = task
            try:
                yield
            finally:
                self._owner = None


class DriverStatement:
    """A read run below SQLAlchemy, straight on the driver's connection, for the few statements that
    every request runs (the key lookup, a search page): through SQLAlchemy's statement and result
    layers a read costs twice the CPU (PostgreSQL: 108 µs against 48 µs; SQLite: 30 µs against 4 µs).

    Written with ``$1``, ``$2`` … placeholders (asyncpg's), which SQLite reads as ``?1``, ``?2`` ….
    Values come back as the driver gives them: no type conversion happens here.
    """

    def __init__(self, sql: str) -> None:
        self.postgresql = sql
        self.sqlite = re.sub(r"\$(\d+)", r"?\1", sql)


class Database:
    """The engines and session factories of one database.

    Writes run in transactions; on SQLite they take the database lock at BEGIN (``BEGIN IMMEDIATE``)
    so that a transaction that reads and then writes never fails half-way with SQLITE_BUSY. On SQLite,
    reads run in autocommit mode on an engine of their own (no BEGIN, COMMIT or reset hops through
    the driver's thread on the hot paths; in WAL mode they never wait for writers). On PostgreSQL both
    share one engine. Nothing may write through ``read_sessions``. On SQLite, ``bulk_write_sessions``
    write as ``write_sessions`` do (same queue, same BEGIN IMMEDIATE) with each statement run in a
    thread of its connection's own, for the few requests whose transaction is long.

    On PostgreSQL with replicas (VPX_DATABASE_REPLICA_URLS), the reads that a moment's lag cannot
    hurt run on them through ``replica_read`` and ``replica_read_session`` (vpx.replicas); every
    other read stays on the primary.
    """

    def __init__(self, settings: Settings, *, pool: bool = True, livemode: bool = True) -> None:
        self.settings = settings
        # False for the sandbox of test mode (vpx.sandbox); its sessions say so (``livemode_of``).
        self.livemode = livemode
        self.url = settings.database_url
        self.dialect = make_url(self.url).get_backend_name()
        pool = pool and settings.pool_size > 0  # pool_size 0: a connection per session (NullPool)
        if self.dialect == "sqlite":
            prepare_sqlite_file(settings)
            self.read_engine = _sqlite_engine(settings, immediate=None, pool=pool)
            self.write_engine = _sqlite_engine(settings, immediate=True, pool=pool)
            # Bulk writes: the stock driver, whose statements run in a thread of each connection's
            # own, so a long transaction leaves the event loop free. An in-memory database is one
            # connection's own: there they share the write engine.
            in_memory = settings.sqlite_path() is None
            self.bulk_write_engine = (
                self.write_engine if in_memory else _sqlite_engine(settings, immediate=True, pool=pool, inline=False)
            )
        else:
            # No pre-ping (a round trip per checkout); connections are recycled instead, and one
            # broken by a server restart is discarded on its first error.
            # Plans: PostgreSQL's default (asyncpg prepares every statement; after five runs a
            # generic plan is kept when it is no costlier). Planning on every run (custom plans
            # only) cost more than running the reveal's statements. Search chooses its access
            # paths itself (vpx.contacts.search.postgres), so a generic plan cannot walk the table
            # for a rare word.
            kwargs: dict[str, Any] = {"pool_recycle": 1800}
            if pool:
                kwargs.update(pool_size=settings.pool_size, max_overflow=settings.pool_size)
            else:
                kwargs["poolclass"] = NullPool
            self.write_engine = create_async_engine(self.url, **kwargs)
            # Reads in autocommit mode, on the same pool: a read is one round trip, not BEGIN, the
            # read and ROLLBACK (the driver keeps autocommit on the client side, so switching costs
            # nothing). Server-side cursors need a transaction: stream from write sessions.
            self.read_engine = self.write_engine.execution_options(isolation_level="AUTOCOMMIT")
            self.bulk_write_engine = self.write_engine  # asyncpg never holds the event loop
        self._writers = WriterQueue() if self.dialect == "sqlite" else None
        info = {"livemode": livemode}
        self.read_sessions = async_sessionmaker(self.read_engine, expire_on_commit=False, info=info)
        self.write_sessions = async_sessionmaker(self.write_engine, expire_on_commit=False, info=info)
        self.bulk_write_sessions = async_sessionmaker(self.bulk_write_engine, expire_on_commit=False, info=info)
        # Settings refuse replicas with SQLite; engines open no connection before their first read.
        urls = settings.database_replica_urls if self.dialect == "postgresql" else []
        self.replicas = Replicas.of(settings, pool=pool) if urls else None

    @property
    def autocommit_engine(self) -> AsyncEngine:
        """Statements that each stand alone: reads, and on PostgreSQL a write made of one statement."""
        return self.read_engine

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    def writer_turn(self) -> AbstractAsyncContextManager[None]:
        """On SQLite, a place in this process's queue for the database's single writer (a no-op on
        PostgreSQL). Writers that queue here take turns in order; left to SQLite's busy handler they
        poll with growing sleeps, and under load a few wait over a second."""
        return self._writers.turn() if self._writers is not None else nullcontext()

    async def fetch(self, statement: DriverStatement, *parameters: Any) -> list[Sequence[Any]]:
        """The rows of one read, on a connection of the read pool, run on the driver itself."""
        async with self.read_engine.connect() as connection:
            raw = await connection.get_raw_connection()
            driver: Any = raw.driver_connection
            if self.is_sqlite:
                rows: list[Sequence[Any]] = await driver.fetchall(statement.sqlite, parameters)
            else:
                rows = await driver.fetch(statement.postgresql, *parameters)
            return rows

    async def replica_read(self, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
        """``work`` on a connection of a replica, in autocommit mode, for a read that may be a moment
        behind the primary (search, signal queries); on the primary's read pool when no replica is
        configured or usable. ``work`` may run twice (on the primary after a replica failed): it
        must only read."""
        if self.replicas is None:
            async with self.read_engine.connect() as connection:
                return await work(connection)
        return await self.replicas.run(
            work, on_replica=lambda replica: replica.engine.connect(), on_primary=self.read_engine.connect
        )

    async def replica_read_session(self, work: Callable[[AsyncSession], Awaitable[T]]) -> T:
        """``replica_read`` with an ORM session (autocommit; nothing may be written through it)."""
        if self.replicas is None:
            async with self.read_sessions() as session:
                return await work(session)
        return await self.replicas.run(
            work, on_replica=lambda replica: replica.sessions(), on_primary=self.read_sessions
        )

    async def dispose(self) -> None:
        await self.write_engine.dispose()
        if self.bulk_write_engine is not self.write_engine:
            await self.bulk_write_engine.dispose()
        if self.read_engine.sync_engine.pool is not self.write_engine.sync_engine.pool:
            await self.read_engine.dispose()
        if self.replicas is not None:
            await self.replicas.dispose()


_warned_readable: set[Path] = set()


def prepare_sqlite_file(settings: Settings) -> None:
    """Makes a missing SQLite database private before SQLite opens it: each directory made on the way
    0700, the file itself (empty, which SQLite takes for a new database) 0600. SQLite gives the
    -wal, -shm and -journal files the database file's mode, so they are private as well (as the
    secret key file is, vpx.secrets). An existing file or directory keeps its mode; a database file
    that other users can read is reported, once."""
    path = settings.sqlite_path()
    if path is None:
        return
    missing = [parent for parent in [path.parent, *path.parent.parents] if not parent.exists()]
    for directory in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process
            directory.mkdir(mode=0o700)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077 and path not in _warned_readable:
            _warned_readable.add(path)
            logging.getLogger("vpx").warning(
                "the database file %s can be read by other users of this machine (mode %s): "
                "chmod 600 it and its -wal and -shm files, and 700 its directory",
                path,
                oct(mode),
            )


def _sqlite_engine(settings: Settings, *, immediate: bool | None, pool: bool, inline: bool = True) -> AsyncEngine:
    """A SQLite engine whose transactions begin with BEGIN IMMEDIATE (writes) or, with
    ``immediate=None``, one in autocommit mode (reads). ``inline``: statements run in the event
    loop's thread (vpx.sqlite_inline); else in a thread per connection (aiosqlite), waiting for the
    write lock there."""
    kwargs: dict[str, Any] = {}
    if immediate is None:
        # Autocommit: the driver runs each statement on its own; SQLAlchemy's commit and
        # rollback become no-ops at the database.
        kwargs.update(isolation_level="AUTOCOMMIT", pool_reset_on_return=None)
    if not pool:
        kwargs["poolclass"] = NullPool
    elif settings.sqlite_path() is not None:
        kwargs.update(pool_size=settings.pool_size, max_overflow=settings.pool_size)
    path = settings.sqlite_path()
    if inline:
        # Statements run in the event loop's thread, not in a thread per connection (vpx.sqlite_inline).
        kwargs["async_creator"] = sqlite_inline.connector(
            str(path) if path is not None else ":memory:", busy_timeout_ms=settings.sqlite_busy_timeout_ms
        )
    else:
        kwargs["connect_args"] = {"timeout": settings.sqlite_busy_timeout_ms / 1000}
    engine = create_async_engine(settings.database_url, **kwargs)

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from the driver so that BEGIN is ours (see do_begin).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    if immediate is None:
        return engine

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def insert_unless_exists(session: AsyncSession, model: type[Base]) -> Any:
    """``INSERT … ON CONFLICT DO NOTHING`` for the session's database (add ``.returning(...)`` to
    learn whether the row went in)."""
    if session.get_bind().dialect.name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(model).on_conflict_do_nothing()
    from sqlalchemy.dialects.postgresql import insert as postgres_insert

    return postgres_insert(model).on_conflict_do_nothing()


def livemode_of(session: AsyncSession) -> bool:
    """False when the session is the sandbox's (test mode, vpx.sandbox): events say so."""
    return bool(session.info.get("livemode", True))


def get_database(request: Request) -> Database:
    """The request's database: the sandbox's for a test key (chosen by its prefix, vpx.sandbox), else
    the app's."""
    database: Database | None = getattr(request.state, "database", None)
    return database if database is not None else request.app.state.database


async def _app_database(request: Request) -> Database:
    # Async: FastAPI runs a plain `def` dependency in a worker thread, a costly hop for a lookup.
    return get_database(request)


# The app's database, for endpoints that choose their own connections (replica-safe reads).
AppDatabase = Annotated[Database, Depends(_app_database)]


class KeepChanges:
    """Mixin for errors whose request should still commit what it wrote (an audit entry, say)."""

    keep_changes = True


@asynccontextmanager
async def request_transaction(sessions: async_sessionmaker[AsyncSession]) -> AsyncIterator[AsyncSession]:
    """A session that commits when the block succeeds (or fails with a ``keep_changes`` error) and
    rolls back otherwise."""
    async with sessions() as session:
        try:
            yield session
        except BaseException as exc:
            if getattr(exc, "keep_changes", False):
                await session.commit()
            else:
                await session.rollback()
            raise
        else:
            await session.commit()


async def read_session(request: Request) -> AsyncIterator[AsyncSession]:
    async with request_transaction(get_database(request).read_sessions) as session:
        yield session


async def write_session(request: Request) -> AsyncIterator[AsyncSession]:
    database = get_database(request)
    async with database.writer_turn(), request_transaction(database.write_sessions) as session:
        yield session


async def bulk_write_session(request: Request) -> AsyncIterator[AsyncSession]:
    database = get_database(request)
    async with database.writer_turn(), request_transaction(database.bulk_write_sessions) as session:
        yield session


# scope="function": the commit happens before the response is sent, so a client that sees a
# success can rely on it being durable.
ReadSession = Annotated[AsyncSession, Depends(read_session, scope="function")]
WriteSession = Annotated[AsyncSession, Depends(write_session, scope="function")]
# A write session for requests that write in bulk: on SQLite its statements run off the event loop
# (``Database.bulk_write_engine``), at the cost of a thread hop per call; elsewhere a WriteSession.
BulkWriteSession = Annotated[AsyncSession, Depends(bulk_write_session, scope="function")]


class UtcDateTime(TypeDecorator[datetime]):
    """A timestamp that is always timezone-aware UTC in Python, whatever the database.

    SQLite keeps no zone; values are stored as naive UTC there, so text order is time order.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def driver_datetime(value: datetime | str | None) -> datetime | None:
    """A UtcDateTime column's value as a driver returns it (SQLite: naive UTC text), made aware."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
