"""One signal stream connection (D23): the replay after Last-Event-ID, then live events, keep-alive
comments, and a clean end when the connection's lifetime is up or the client fell too far behind; a
final `closed` event when the access it was opened with has ended (the broker finds out, see
``access``), checked before every message so that nothing is sent once that is known.

The database is only touched for the replay, in short read transactions: no session is held while
the connection waits (the broker reads new signals once for every connection of the process).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from sse_starlette import EventSourceResponse, ServerSentEvent

from vpx.config import Settings
from vpx.db import Database
from vpx.signals import service as signal_service
from vpx.signals.access import CLOSED_DETAILS, SESSION_EXPIRED, ClosedReason, SessionAccess, StreamAccess
from vpx.signals.stream import SignalBroker, encode_signal

REPLAY_BATCH = 500
# The client's reconnection delay after a clean end, in milliseconds.
RECONNECT_MS = 1000


def closed_event(reason: ClosedReason) -> ServerSentEvent:
    """The last message of a stream whose access has ended: no id (Last-Event-ID stays the last
    signal's), the reason for programs and a sentence for people."""
    return ServerSentEvent(event="closed", data=json.dumps({"reason": reason, "detail": CLOSED_DETAILS[reason]}))


async def signal_events(
    *,
    broker: SignalBroker,
    database: Database,
    settings: Settings,
    signal_filter: signal_service.SignalFilter,
    last_event_id: int | None,
    access: StreamAccess | None,
) -> AsyncIterator[ServerSentEvent | bytes]:
    subscription = await broker.subscribe(signal_filter, access)
    loop = asyncio.get_running_loop()
    # One timer for the connection's whole life, not a timeout on every wait: a wait with a timeout
    # (asyncio.wait_for) made a task per wake-up, a fifth of the server's time at 1,000 streams.
    lifetime = loop.call_later(settings.stream_max_seconds, subscription.expire)
    # A dashboard session's own end, to the second (the broker's check sees sign-outs).
    session_end = (
        loop.call_later(max(0.0, access.expires_in), subscription.close, SESSION_EXPIRED)
        if isinstance(access, SessionAccess)
        else None
    )
    try:
        # The connection opens at once, whatever follows.
        yield ServerSentEvent(comment="vpx signal stream", retry=RECONNECT_MS)
        sent = subscription.start_sequence
        if last_event_id is not None:
            # D23: replay what the client missed, up to where the live queue takes over; no gap, no repeat.
            sent = last_event_id
            while sent < subscription.start_sequence:
                async with database.read_sessions() as session:
                    views = await signal_service.signals_after(
                        session, after_sequence=sent, signal_filter=signal_filter, limit=REPLAY_BATCH,
                        settings=settings,
                    )  # fmt: skip
                wanted = [v for v in views if v.sequence <= subscription.start_sequence]
                if subscription.closed is not None:
                    break
                if wanted:
                    yield b"".join(encode_signal(view) for view in wanted)
                    sent = wanted[-1].sequence
                if len(wanted) < len(views) or len(views) < REPLAY_BATCH:
                    break
            sent = max(sent, subscription.start_sequence)
        while True:
            # The access first: once its end is known, nothing else goes out (D23 streams paid signals).
            if subscription.closed is not None:
                yield closed_event(subscription.closed)
                return
            if subscription.expired:
                yield ServerSentEvent(comment="lifetime reached: reconnect with Last-Event-ID", retry=RECONNECT_MS)
                return
            if subscription.overflowed and not subscription.pending:
                yield ServerSentEvent(comment="too far behind: reconnect with Last-Event-ID", retry=RECONNECT_MS)
                return
            await subscription.wait()
            if subscription.closed is not None:
                continue
            # Whatever is queued goes out in one write: one send per wake-up, not per signal.
            fresh = [item for item in subscription.take() if item.sequence > sent]
            if fresh:
                yield b"".join(item.message for item in fresh)
                sent = fresh[-1].sequence
    finally:
        lifetime.cancel()
        if session_end is not None:
            session_end.cancel()
        broker.unsubscribe(subscription)


def stream_response(
    *,
    broker: SignalBroker,
    database: Database,
    settings: Settings,
    signal_filter: signal_service.SignalFilter,
    last_event_id: int | None,
    access: StreamAccess,
) -> EventSourceResponse:
    """The stream as a response; ``access`` is what let it in (an API key or a dashboard session),
    re-checked while it is open."""
    events = signal_events(
        broker=broker, database=database, settings=settings, signal_filter=signal_filter,
        last_event_id=last_event_id, access=access,
    )  # fmt: skip
    # D23: a keep-alive comment at least every 15 s (sse-starlette's ping).
    return EventSourceResponse(events, ping=max(1, int(settings.stream_keepalive_seconds)))
