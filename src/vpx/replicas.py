"""Reads from PostgreSQL streaming replicas (VPX_DATABASE_REPLICA_URLS).

Only reads that a moment's lag cannot hurt go here, through ``Database.replica_read`` and
``Database.replica_read_session``: contact search and its previews, signal queries and single
signals. Everything that spends, charges, authenticates, writes, or must see what the same client
has just written reads from the primary (docs/operator-guide.md, "Read replicas", has the table).

Each read goes to the next replica in turn. A replica that cannot be reached (refused, timed out,
shut down, too many connections, a bad password) is left alone for ``RETRY_SECONDS`` and the read
runs again on the primary within the same request, so the caller never sees the failure; one
warning per outage, not per request. A replica more than ``MAX_LAG_SECONDS`` behind the primary is
passed over the same way until it catches up (checked at most every ``LAG_CHECK_SECONDS``). A read
may therefore run twice: the work handed in must only read.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import asyncpg
from prometheus_client import Counter
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.pool import NullPool

from vpx.config import Settings

# A replica that failed is tried again after this long; meanwhile its reads go to the primary.
RETRY_SECONDS = 10.0
# Bounded staleness: a replica further behind than this is passed over until it catches up.
MAX_LAG_SECONDS = 30.0
# How often (per replica and process) the lag is measured: one extra round trip at most this often.
LAG_CHECK_SECONDS = 5.0
# A replica that does not accept a connection within this long counts as down (asyncpg waits 60 s).
CONNECT_TIMEOUT_SECONDS = 2.0
# A statement on a replica that has not answered after this long is given up and run on the primary
# (a replica that hangs, say behind a network partition, must not hang the request with it).
STATEMENT_TIMEOUT_SECONDS = 15.0

# How far behind the primary the replica is, in seconds. Caught up (0) when it has replayed all the
# WAL it received while its WAL receiver runs; otherwise the age of the last transaction it replayed
# (on a primary without commits that age grows with nothing to replay, but vpx's workers commit a
# heartbeat every 5 s). A server that is not in recovery (a replica promoted, or a primary named
# here) is not behind anything.
_LAG = text(
    "SELECT CASE WHEN NOT pg_is_in_recovery() THEN 0 "
    "WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() "
    "AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver) THEN 0 "
    "ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0) END"
)

# server: a replica's host:port/database, or "primary" for a replica-safe read no replica served.
READS = Counter("vpx_replica_reads_total", "Replica-safe reads, by the server that answered", ["server"])

logger = logging.getLogger("vpx.replicas")

T = TypeVar("T")
R = TypeVar("R", AsyncConnection, AsyncSession)

# "down": the replica cannot serve (left alone for RETRY_SECONDS); "retry": this statement could not
# be served there (a conflict with the replica's replay, a timeout), the next one may be.
Failure = Literal["down", "retry"]
_DOWN_CLASSES = ("08", "53", "57", "28", "3D")  # connection, resources, shutdown, authorisation, no database


def failure_of(exc: BaseException) -> Failure | None:
    """Whether an error raised by a read on a replica is the replica's failure (the read is run on
    the primary instead) or the read's own (None: raised to the caller as it would be on the primary)."""
    found = _failure(exc)
    return found[0] if found is not None else None


def _failure(exc: BaseException) -> tuple[Failure, BaseException] | None:
    """The kind of failure and the error in the chain that shows it."""
    for cause in _chain(exc):
        if isinstance(cause, asyncpg.PostgresError):
            state = str(getattr(cause, "sqlstate", "") or "")
            if state in ("40001", "57014"):  # canceled: conflict with recovery, statement timeout
                return "retry", cause
            return ("down", cause) if state[:2] in _DOWN_CLASSES else None
        if isinstance(cause, (OSError, TimeoutError, asyncpg.InterfaceError)):
            return "down", cause
        if isinstance(cause, DBAPIError) and cause.connection_invalidated:
            return "down", cause.orig if cause.orig is not None else cause
    return None


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The error, then what it wraps or was raised from, breadth first."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [exc]
    while pending:
        cause = pending.pop(0)
        if cause is None or id(cause) in seen:
            continue
        seen.add(id(cause))
        yield cause
        pending += [getattr(cause, "orig", None), cause.__cause__, cause.__context__]


def _describe(exc: BaseException) -> str:
    """The failure by its type and first line (never SQL or its parameters)."""
    found = _failure(exc)
    shown = found[1] if found is not None else exc
    text_ = str(shown).strip()
    message = text_.splitlines()[0][:200] if text_ else ""
    return f"{type(shown).__name__}: {message}" if message else type(shown).__name__


def server_name(url: str) -> str:
    """host:port/database, without user or password (for logs and metrics)."""
    parsed = make_url(url)
    return f"{parsed.host or 'localhost'}:{parsed.port or 5432}/{parsed.database or ''}"


@dataclass(eq=False)
class Replica:
    name: str
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    # Not tried before this moment (monotonic clock): down, or too far behind.
    resume_at: float = 0.0
    lag_checked_at: float = float("-inf")
    failing: bool = False  # in an outage that was reported
    lagging: bool = False  # passed over for its lag, reported


@dataclass(eq=False)
class Replicas:
    """The replicas of one database, taken in turn for replica-safe reads."""

    replicas: list[Replica]
    clock: Callable[[], float] = time.monotonic
    _turn: Iterator[int] = field(init=False)

    def __post_init__(self) -> None:
        self._turn = itertools.count()

    @classmethod
    def of(cls, settings: Settings, *, pool: bool) -> Replicas:
        """One engine per replica URL: autocommit (a read is one round trip), pooled like the primary's."""
        replicas = []
        for url in settings.database_replica_urls:
            kwargs: dict[str, Any] = {
                "isolation_level": "AUTOCOMMIT",
                "pool_recycle": 1800,
                "connect_args": {"timeout": CONNECT_TIMEOUT_SECONDS, "command_timeout": STATEMENT_TIMEOUT_SECONDS},
            }
            if pool:
                kwargs.update(pool_size=settings.pool_size, max_overflow=settings.pool_size)
            else:
                kwargs["poolclass"] = NullPool
            engine = create_async_engine(url, **kwargs)
            sessions = async_sessionmaker(engine, expire_on_commit=False)
            replicas.append(Replica(name=server_name(url), engine=engine, sessions=sessions))
        return cls(replicas)

    def pick(self) -> Replica | None:
        """The next replica in turn that is not left alone just now; None when none is."""
        now = self.clock()
        start = next(self._turn)
        for offset in range(len(self.replicas)):
            replica = self.replicas[(start + offset) % len(self.replicas)]
            if replica.resume_at <= now:
                return replica
        return None

    async def run(
        self,
        work: Callable[[R], Awaitable[T]],
        *,
        on_replica: Callable[[Replica], AbstractAsyncContextManager[R]],
        on_primary: Callable[[], AbstractAsyncContextManager[R]],
    ) -> T:
        """``work`` on a replica's reader, or on the primary's when no replica is usable or the one
        tried fails (within this call: the caller sees the primary's answer)."""
        replica = self.pick()
        if replica is not None:
            try:
                async with on_replica(replica) as reader:
                    if await self._fresh(replica, reader):
                        result = await work(reader)
                        self._answered(replica)
                        READS.labels(replica.name).inc()
                        return result
            except Exception as exc:
                failure = failure_of(exc)
                if failure is None:
                    raise
                self._failed(replica, exc, failure)
        READS.labels("primary").inc()
        async with on_primary() as reader:
            return await work(reader)

    async def _fresh(self, replica: Replica, reader: AsyncConnection | AsyncSession) -> bool:
        """False when the replica is further behind than MAX_LAG_SECONDS (measured at most every
        LAG_CHECK_SECONDS; True in between)."""
        now = self.clock()
        if now - replica.lag_checked_at < LAG_CHECK_SECONDS:
            return True
        replica.lag_checked_at = now  # before the round trip: concurrent reads do not all measure
        lag = float((await reader.execute(_LAG)).scalar_one() or 0)
        if lag <= MAX_LAG_SECONDS:
            if replica.lagging:
                replica.lagging = False
                logger.warning(
                    "database replica %s has caught up (%.1f s behind); reads go to it again", replica.name, lag
                )
            return True
        replica.resume_at = now + LAG_CHECK_SECONDS
        replica.lag_checked_at = float("-inf")  # measured again on its next read
        if not replica.lagging:
            replica.lagging = True
            logger.warning(
                "database replica %s is %.0f s behind the primary (more than %.0f s): its reads go to the "
                "primary until it catches up",
                replica.name,
                lag,
                MAX_LAG_SECONDS,
            )
        return False

    def _answered(self, replica: Replica) -> None:
        if replica.failing:
            replica.failing = False
            logger.warning("database replica %s answers again; reads go to it again", replica.name)

    def _failed(self, replica: Replica, exc: BaseException, failure: Failure) -> None:
        if failure == "retry":
            logger.info("a read on database replica %s was run on the primary: %s", replica.name, _describe(exc))
            return
        replica.resume_at = self.clock() + RETRY_SECONDS
        replica.lag_checked_at = float("-inf")  # measured again when it is tried again
        if not replica.failing:
            replica.failing = True
            logger.warning(
                "database replica %s failed (%s): its reads go to the primary; tried again every %.0f s",
                replica.name,
                _describe(exc),
                RETRY_SECONDS,
            )

    async def dispose(self) -> None:
        for replica in self.replicas:
            await replica.engine.dispose()
