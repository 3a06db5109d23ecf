"""The signal stream's broker (D23): one per process, shared by every open stream.

New signals are found once per process and fanned out in memory: on PostgreSQL a LISTEN connection
hears the ingest transaction's NOTIFY at commit (from any process); on SQLite an ingest in this process
wakes the broker after commit and a short poll finds what other processes (the CLI) committed. Each
wake-up is one read of the signals above the last sequence seen, with their views built once; each
distinct D22 filter among the connections then takes its share, encoded and joined once, and every
connection with that filter gets it as one item. A connection whose queue fills up (a client that
reads too slowly) is told to go: it reconnects with Last-Event-ID and catches up from the database.

The broker also re-checks, every ``VPX_STREAM_ACCESS_CHECK_SECONDS``, that the keys, sessions and
accounts its streams were opened with still allow them, in one read for all of them (``access``); a
stream whose access has ended is closed with the reason, and sent nothing more.

Sequences are handed out under a row lock held until commit (see ``pipeline``), so reading
``sequence > last`` never skips a signal that commits later with a lower number.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import event, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from vpx.config import Settings
from vpx.db import Database
from vpx.listen import RETRY_SECONDS, listen_until
from vpx.models import Signal
from vpx.signals import service as signal_service
from vpx.signals.access import ClosedReason, StreamAccess, current_state
from vpx.signals.schemas import SignalView

log = logging.getLogger(__name__)

NOTIFY_CHANNEL = "vpx_signals"
READ_BATCH = 500


FILTER_FIELDS = ("category", "industry", "intent_level", "state", "source_status")
FilterKey = tuple[str | None, ...]


def filter_key(signal_filter: signal_service.SignalFilter) -> FilterKey:
    """The stream filter as a tuple (D19: no source_status means available only), so that every
    connection with the same filter is matched once per signal."""
    wanted = signal_service.stream_filter(signal_filter)
    return tuple(getattr(wanted, name) for name in FILTER_FIELDS)


def key_matches(key: FilterKey, values: tuple[str | None, ...]) -> bool:
    return all(want is None or want == have for want, have in zip(key, values, strict=True))


def encode_signal(view: SignalView) -> bytes:
    """One D23 message, encoded once per signal and shared by every connection that gets it. The JSON
    has no raw line breaks (they are escaped), so `data:` is one line."""
    return f"id: {view.sequence}\nevent: signal\ndata: {view.model_dump_json()}\n\n".encode()


@dataclass(frozen=True, slots=True)
class StreamItem:
    """The messages of one read of new signals that one filter lets through, in sequence order:
    ``first`` to ``sequence`` (the last), ``count`` signals, encoded and joined once for every
    connection with that filter."""

    first: int
    sequence: int
    count: int
    message: bytes

    @classmethod
    def of(cls, messages: list[tuple[int, bytes]]) -> StreamItem:
        return cls(messages[0][0], messages[-1][0], len(messages), b"".join(m for _, m in messages))


@dataclass(eq=False)
class Subscription:
    """One open stream: its filter, the access it was opened with, the messages waiting for it, whether
    it fell too far behind, whether its lifetime is up and whether its access has ended.

    Not an ``asyncio.Queue``: the bound (``VPX_STREAM_QUEUE_SIZE``) counts signals while an item holds
    a whole read's worth, and one waiter future is all a single reader needs. Each wake-up of each
    connection is the server's main cost at a thousand streams (docs/benchmarks.md)."""

    signal_filter: signal_service.SignalFilter
    # The last sequence the broker had dispatched when this subscription began: everything above it
    # arrives here, everything up to it is the stream's replay from the database.
    start_sequence: int
    limit: int
    # What let the stream in (None only for a stream no one opened with a key or a session: tests).
    access: StreamAccess | None = None
    pending: deque[StreamItem] = field(default_factory=deque)
    queued: int = 0
    overflowed: bool = False
    expired: bool = False
    # Why the stream's access ended, once it has: nothing more is delivered.
    closed: ClosedReason | None = None
    _waiter: asyncio.Future[None] | None = None

    def deliver(self, item: StreamItem) -> None:
        if self.overflowed or self.closed is not None:
            return
        if self.queued + item.count > self.limit:
            # The client reads too slowly: it is sent what is queued, then told to resume from the
            # database (Last-Event-ID), rather than held in memory without bound.
            self.overflowed = True
        else:
            self.pending.append(item)
            self.queued += item.count
        self._wake()

    def expire(self) -> None:
        """The connection's lifetime is up (a timer calls this)."""
        self.expired = True
        self._wake()

    def close(self, reason: ClosedReason) -> None:
        """The access the stream was opened with has ended: what is queued is dropped, and the
        connection sends the `closed` event and nothing else."""
        if self.closed is None:
            self.closed = reason
            self.pending.clear()
            self.queued = 0
        self._wake()

    async def wait(self) -> None:
        """Returns once messages are pending, or the subscription overflowed, expired or was closed."""
        if self.pending or self.overflowed or self.expired or self.closed is not None:
            return
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def take(self) -> list[StreamItem]:
        items = list(self.pending)
        self.pending.clear()
        self.queued = 0
        return items

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


class SignalBroker:
    def __init__(self, database: Database, settings: Settings, *, access_database: Database | None = None) -> None:
        self.database = database
        # Where keys, sessions and accounts are: the app's database, also for the sandbox's broker
        # (test mode, vpx.sandbox), whose signals are elsewhere.
        self.access_database = access_database or database
        self.settings = settings
        self.subscriptions: set[Subscription] = set()
        # The open subscriptions by filter: a signal is weighed once per distinct filter, not once per
        # connection (a thousand connections usually share a few dozen filters).
        self.groups: dict[FilterKey, set[Subscription]] = {}
        self.last_sequence = 0
        self.woken = asyncio.Event()
        self.stopping = asyncio.Event()
        self.tasks: list[asyncio.Task[None]] = []
        self.started = False
        self.lock = asyncio.Lock()

    async def subscribe(
        self, signal_filter: signal_service.SignalFilter, access: StreamAccess | None = None
    ) -> Subscription:
        async with self.lock:
            if not self.started:
                await self._start()
            elif not self.subscriptions:
                # Idle: with no stream open the broker reads nothing, so where it last read is behind.
                # A new stream starts from the newest signal, not from there (it would send every signal
                # since as new).
                await self._read_newest()
        subscription = Subscription(
            signal_filter=signal_filter,
            start_sequence=self.last_sequence,
            limit=self.settings.stream_queue_size,
            access=access,
        )
        self.subscriptions.add(subscription)
        self.groups.setdefault(filter_key(signal_filter), set()).add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self.subscriptions.discard(subscription)
        key = filter_key(subscription.signal_filter)
        group = self.groups.get(key)
        if group is not None:
            group.discard(subscription)
            if not group:
                del self.groups[key]

    def wake(self) -> None:
        self.woken.set()

    async def stop(self) -> None:
        self.stopping.set()
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.tasks.clear()
        _brokers.discard(self)

    async def _read_newest(self) -> None:
        async with self.database.read_sessions() as session:
            newest = int(await session.scalar(select(func.coalesce(func.max(Signal.sequence), 0))) or 0)
        self.last_sequence = max(self.last_sequence, newest)

    async def _start(self) -> None:
        await self._read_newest()
        self.started = True
        _brokers.add(self)
        self.tasks.append(asyncio.create_task(self._dispatch_loop()))
        self.tasks.append(asyncio.create_task(self._access_loop()))
        if not self.database.is_sqlite:
            self.tasks.append(asyncio.create_task(self._listen()))

    async def _dispatch_loop(self) -> None:
        # With LISTEN, the poll is only a safety net for a lost connection.
        interval = self.settings.stream_poll_seconds if self.database.is_sqlite else RETRY_SECONDS
        while not self.stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.woken.wait(), timeout=interval)
            self.woken.clear()
            if not self.subscriptions:
                continue
            try:
                await self._dispatch_new()
            except Exception:  # a database hiccup must not end the broker; the next wake-up retries
                log.exception("signal stream read failed")

    async def _access_loop(self) -> None:
        """Every few seconds, one read for all open streams: those whose key, session or account no
        longer lets them in are closed, in whatever process that access was ended."""
        interval = self.settings.stream_access_check_seconds
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), timeout=interval)
            if self.stopping.is_set():
                return
            try:
                await self.check_access()
            except Exception:  # a database hiccup must not end the broker; the next round retries
                log.exception("signal stream access check failed")

    async def check_access(self) -> None:
        """One round of the check (the loop's; tests call it directly)."""
        watched = [s for s in self.subscriptions if s.access is not None and s.closed is None]
        if not watched:
            return
        state = await current_state(self.access_database, [s.access for s in watched if s.access is not None])
        for subscription in watched:
            assert subscription.access is not None
            reason = state.reason(subscription.access)
            if reason is not None:
                subscription.close(reason)

    async def _dispatch_new(self) -> None:
        while True:
            async with self.database.read_sessions() as session:
                rows = list(
                    await session.scalars(
                        select(Signal)
                        .where(Signal.sequence > self.last_sequence)
                        .order_by(Signal.sequence)
                        .limit(READ_BATCH)
                    )
                )
                if not rows:
                    return
                views = await signal_service.views_of(session, rows, self.settings)
            # Each signal is encoded once, and each filter's share of this read joined once: a
            # connection gets one item per read, whatever the number of signals in it.
            matched: dict[FilterKey, list[tuple[int, bytes]]] = {}
            for view in views:
                values = tuple(getattr(view, name) for name in FILTER_FIELDS)
                message: bytes | None = None
                for key in self.groups:
                    if key_matches(key, values):
                        message = message or encode_signal(view)
                        matched.setdefault(key, []).append((view.sequence, message))
            for key, messages in matched.items():
                item = StreamItem.of(messages)
                for subscription in list(self.groups.get(key, ())):
                    if subscription.start_sequence < item.first:
                        subscription.deliver(item)
                    else:
                        # Subscribed while this read was under way: only what its replay did not send.
                        rest = [(n, m) for n, m in messages if n > subscription.start_sequence]
                        if rest:
                            subscription.deliver(StreamItem.of(rest))
            self.last_sequence = rows[-1].sequence
            if len(rows) < READ_BATCH:
                return

    async def _listen(self) -> None:
        # On (re)connecting, a wake-up reads whatever committed while nobody listened.
        await listen_until(self.database.url, NOTIFY_CHANNEL, self.wake, self.stopping, log=log, on_connect=self.wake)


# The brokers of this process, woken after an ingest here commits.
_brokers: set[SignalBroker] = set()
_PENDING = "vpx_signals_pending"


def _wake_local(sync_session: Session) -> None:
    if sync_session.info.pop(_PENDING, None):
        for broker in list(_brokers):
            broker.wake()


def _forget(sync_session: Session) -> None:
    sync_session.info.pop(_PENDING, None)


async def announce_signals(session: AsyncSession, signals: Any, context: Any) -> None:
    """The ingest hook: streams everywhere learn of the new signals when (and only if) they commit.
    PostgreSQL delivers the NOTIFY at commit to every listening process; brokers in this process are
    woken by an after-commit hook."""
    sync_session = session.sync_session
    if not sync_session.info.get(_PENDING):
        sync_session.info[_PENDING] = True
        if not event.contains(sync_session, "after_commit", _wake_local):
            event.listen(sync_session, "after_commit", _wake_local)
            event.listen(sync_session, "after_rollback", _forget)
    if context.dialect == "postgresql":
        await session.execute(text("SELECT pg_notify(:channel, '')"), {"channel": NOTIFY_CHANNEL})
