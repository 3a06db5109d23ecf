"""One stream connection's loop (D23) with its subscription fed by hand: a read's messages arrive as one
write, a slow client is sent what is queued and then told to resume, a lifetime ends the stream
cleanly, and the subscription is given back whatever way the stream ends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from sse_starlette import ServerSentEvent

from tests.conftest import test_settings
from vpx.signals import service as signal_service
from vpx.signals.sse import signal_events
from vpx.signals.stream import StreamItem, Subscription

pytestmark = pytest.mark.asyncio


class HandFedBroker:
    """The broker's side of a connection: one subscription, filled by the test."""

    def __init__(self, limit: int) -> None:
        self.subscription = Subscription(signal_service.SignalFilter(), start_sequence=10, limit=limit)
        self.unsubscribed = False

    async def subscribe(self, signal_filter: signal_service.SignalFilter, access: object = None) -> Subscription:
        return self.subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self.unsubscribed = True


def _item(*sequences: int) -> StreamItem:
    return StreamItem.of([(n, f"id: {n}\nevent: signal\ndata: {{}}\n\n".encode()) for n in sequences])


def _events(broker: HandFedBroker, **settings: str) -> AsyncIterator[ServerSentEvent | bytes]:
    return signal_events(
        broker=broker,  # type: ignore[arg-type]
        database=None,  # type: ignore[arg-type]  # no Last-Event-ID: no replay, no database
        settings=test_settings("sqlite+aiosqlite:///unused.db", **settings),
        signal_filter=signal_service.SignalFilter(),
        last_event_id=None,
        access=None,  # nothing to re-check: the subscription is the test's
    )


async def test_everything_queued_goes_out_in_one_write() -> None:
    broker = HandFedBroker(limit=100)
    events = _events(broker)
    opening = await anext(events)
    assert isinstance(opening, ServerSentEvent) and opening.comment == "vpx signal stream"
    broker.subscription.deliver(_item(11, 12, 13))
    broker.subscription.deliver(_item(14))
    assert await anext(events) == b"".join(_item(n).message for n in (11, 12, 13, 14))
    await events.aclose()
    assert broker.unsubscribed


async def test_a_slow_client_gets_what_is_queued_then_is_told_to_resume() -> None:
    broker = HandFedBroker(limit=10)
    events = _events(broker)
    await anext(events)
    broker.subscription.deliver(_item(*range(11, 17)))  # 6 signals: queued
    broker.subscription.deliver(_item(*range(17, 23)))  # 6 more would pass the limit of 10: dropped
    assert await anext(events) == _item(*range(11, 17)).message
    farewell = await anext(events)
    assert isinstance(farewell, ServerSentEvent) and farewell.comment is not None
    assert farewell.comment.startswith("too far behind") and farewell.retry == 1000
    with pytest.raises(StopAsyncIteration):
        await anext(events)
    assert broker.unsubscribed


async def test_the_lifetime_ends_a_waiting_stream_cleanly() -> None:
    broker = HandFedBroker(limit=100)
    events = _events(broker, stream_max_seconds="0.05")
    await anext(events)
    farewell = await asyncio.wait_for(anext(events), timeout=5)
    assert isinstance(farewell, ServerSentEvent) and farewell.comment is not None
    assert farewell.comment.startswith("lifetime reached") and farewell.retry == 1000
    with pytest.raises(StopAsyncIteration):
        await anext(events)
    assert broker.unsubscribed
