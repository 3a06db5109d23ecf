"""SQLite without a thread per connection: an aiosqlite-compatible driver whose calls run at once, in
the event loop's own thread.

aiosqlite gives every connection a thread and hops to it for each call. Through SQLAlchemy's adapter
a statement costs four hops (cursor, execute, fetch, close), each a queue put, a thread wake-up and
a loop wake-up: 50-100 µs apiece on two busy cores, more than the service's short statements cost
SQLite itself (an authenticated read spent 3 ms a request, most of it in hops; see
docs/benchmarks.md). Here a call runs where it is made.

A statement holds the loop while it runs, so the one wait that can be long is not left to SQLite's
busy handler, which would sleep inside the loop: a statement refused because another connection
holds the write lock (``SQLITE_BUSY``; in WAL mode only ``BEGIN IMMEDIATE`` meets it in practice) is
retried after an asyncio sleep until the busy timeout. A refused statement has done nothing, so
running it again is safe.

No library does this: aiosqlite is the only asyncio SQLite driver SQLAlchemy supports, and its
thread is its design. This module implements the part of aiosqlite's interface that SQLAlchemy's
adapter and the service use; the engine gets it through ``async_creator`` (``vpx.db``).
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Generator, Iterable
from typing import Any, TypeVar

T = TypeVar("T")

_BUSY = sqlite3.SQLITE_BUSY
_LOCKED = sqlite3.SQLITE_LOCKED
FETCH_CHUNK = 256


def _is_busy(error: sqlite3.OperationalError) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    if code is None:  # not raised by SQLite itself
        return False
    return code & 0xFF in (_BUSY, _LOCKED)


class _Immediate:
    """What SQLAlchemy's adapter uses of aiosqlite's request queue (to set ``isolation_level``):
    the request runs at once."""

    def put_nowait(self, item: tuple[asyncio.Future[Any] | None, Callable[[], Any]]) -> None:
        future, function = item
        try:
            result = function()
        except BaseException as error:  # handed to the waiting caller, as aiosqlite does
            if future is not None:
                future.set_exception(error)
            return
        if future is not None:
            future.set_result(result)


class Cursor:
    def __init__(self, connection: Connection, cursor: sqlite3.Cursor) -> None:
        self._connection = connection
        self._cursor = cursor

    def __await__(self) -> Generator[Any, None, Cursor]:
        return self._self().__await__()

    async def _self(self) -> Cursor:
        return self

    async def __aenter__(self) -> Cursor:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._rows()

    async def _rows(self) -> AsyncIterator[Any]:
        while rows := self._cursor.fetchmany(FETCH_CHUNK):
            for row in rows:
                yield row

    async def execute(self, sql: str, parameters: Any = None) -> Cursor:
        await self._connection._run(self._cursor.execute, sql, () if parameters is None else parameters)
        return self

    async def executemany(self, sql: str, parameters: Iterable[Any]) -> Cursor:
        await self._connection._run(self._cursor.executemany, sql, parameters)
        return self

    async def executescript(self, script: str) -> Cursor:
        await self._connection._run(self._cursor.executescript, script)
        return self

    async def fetchone(self) -> Any:
        return self._cursor.fetchone()

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        return self._cursor.fetchmany(self._cursor.arraysize if size is None else size)

    async def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()

    async def close(self) -> None:
        self._cursor.close()

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._cursor.lastrowid

    @property
    def arraysize(self) -> int:
        return self._cursor.arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._cursor.arraysize = value

    @property
    def description(self) -> Any:
        return self._cursor.description


class Connection:
    def __init__(self, connection: sqlite3.Connection, *, busy_timeout: float) -> None:
        # aiosqlite's names, which SQLAlchemy's adapter reads: `_connection` is None once closed.
        self._connection: sqlite3.Connection | None = connection
        self._conn = connection
        self._tx = _Immediate()
        self._busy_timeout = busy_timeout

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        deadline: float | None = None
        delay = 0.001
        while True:
            try:
                return function(*args)
            except sqlite3.OperationalError as error:
                if not _is_busy(error):
                    raise
                now = time.monotonic()
                deadline = deadline if deadline is not None else now + self._busy_timeout
                if now >= deadline:
                    raise
                await asyncio.sleep(min(delay, deadline - now))
                delay = min(delay * 2, 0.005)

    def cursor(self) -> Cursor:
        return Cursor(self, self._conn.cursor())

    async def execute(self, sql: str, parameters: Any = None) -> Cursor:
        return await self.cursor().execute(sql, parameters)

    async def executemany(self, sql: str, parameters: Iterable[Any]) -> Cursor:
        return await self.cursor().executemany(sql, parameters)

    async def executescript(self, script: str) -> Cursor:
        return await self.cursor().executescript(script)

    async def fetchall(self, sql: str, parameters: Any = ()) -> list[Any]:
        """Runs one statement and returns its rows, with no cursor object to wrap."""
        cursor = await self._run(self._conn.execute, sql, parameters)
        return cursor.fetchall()

    async def commit(self) -> None:
        await self._run(self._conn.commit)

    async def rollback(self) -> None:
        self._conn.rollback()

    async def close(self) -> None:
        if self._connection is not None:
            self._connection = None
            self._conn.close()

    def stop(self) -> None:
        if self._connection is not None:
            self._connection = None
            self._conn.close()

    async def create_function(self, name: str, num_params: int, func: Callable[..., Any], **kwargs: Any) -> None:
        self._conn.create_function(name, num_params, func, **kwargs)

    @property
    def in_transaction(self) -> bool:
        return self._conn.in_transaction

    @property
    def isolation_level(self) -> str | None:
        return self._conn.isolation_level

    @isolation_level.setter
    def isolation_level(self, value: str | None) -> None:
        self._conn.isolation_level = value  # type: ignore[assignment]

    @property
    def total_changes(self) -> int:
        return self._conn.total_changes


def connector(database: str, *, busy_timeout_ms: int, uri: bool = False) -> Callable[[], Any]:
    """An ``async_creator`` for SQLAlchemy: new connections in autocommit mode (the engine's own
    events begin transactions), refusing at once when locked (``Connection`` waits instead)."""

    async def connect() -> Connection:
        raw = sqlite3.connect(database, timeout=0, isolation_level=None, check_same_thread=False, uri=uri)
        return Connection(raw, busy_timeout=busy_timeout_ms / 1000)

    return connect
