"""A stream whose access has ended (D23): the connection sends `event: closed` with the reason before
anything still queued, and then nothing; a dashboard session's expiry closes its stream; the broker's
check reads the database for every open stream at once and closes only those whose access ended."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from fastapi import FastAPI
from sse_starlette import ServerSentEvent

from tests.conftest import test_settings
from tests.factories import Factory
from vpx.accounts import lifecycle
from vpx.auth import service as key_service
from vpx.signals import service as signal_service
from vpx.signals.access import AccessState, KeyAccess, KeyState, SessionAccess, StreamAccess
from vpx.signals.sse import signal_events
from vpx.signals.stream import SignalBroker, StreamItem, Subscription


class HandFedBroker:
    """The broker's side of a connection: one subscription, filled (and closed) by the test."""

    def __init__(self) -> None:
        self.subscription = Subscription(signal_service.SignalFilter(), start_sequence=10, limit=100)
        self.unsubscribed = False

    async def subscribe(self, signal_filter: signal_service.SignalFilter, access: StreamAccess | None) -> Subscription:
        self.subscription.access = access
        return self.subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self.unsubscribed = True


def _item(*sequences: int) -> StreamItem:
    return StreamItem.of([(n, f"id: {n}\nevent: signal\ndata: {{}}\n\n".encode()) for n in sequences])


def _events(broker: HandFedBroker, access: StreamAccess | None) -> AsyncIterator[ServerSentEvent | bytes]:
    return signal_events(
        broker=broker,  # type: ignore[arg-type]
        database=None,  # type: ignore[arg-type]  # no Last-Event-ID: no replay, no database
        settings=test_settings("sqlite+aiosqlite:///unused.db"),
        signal_filter=signal_service.SignalFilter(),
        last_event_id=None,
        access=access,
    )


async def _closing(events: AsyncIterator[ServerSentEvent | bytes]) -> str:
    """The next message must be the `closed` event, and the last; its reason."""
    closed = await asyncio.wait_for(anext(events), timeout=5)
    assert isinstance(closed, ServerSentEvent) and closed.event == "closed" and closed.id is None
    body = json.loads(str(closed.data))
    assert body["detail"]
    with pytest.raises(StopAsyncIteration):
        await anext(events)
    reason: str = body["reason"]
    return reason


async def test_closed_goes_out_instead_of_what_is_queued() -> None:
    broker = HandFedBroker()
    events = _events(broker, KeyAccess("key_1", "acc_1", "127.0.0.1"))
    await anext(events)  # the opening comment
    broker.subscription.deliver(_item(11, 12))
    broker.subscription.close("key_revoked")
    broker.subscription.deliver(_item(13))  # found by a read already under way: not delivered either
    assert await _closing(events) == "key_revoked"
    assert broker.unsubscribed


async def test_a_waiting_stream_is_closed_at_once() -> None:
    broker = HandFedBroker()
    events = _events(broker, KeyAccess("key_1", "acc_1", None))
    await anext(events)
    waiting = asyncio.ensure_future(anext(events))
    await asyncio.sleep(0.01)
    assert not waiting.done()
    broker.subscription.close("account_suspended")
    closed = await asyncio.wait_for(waiting, timeout=5)
    assert isinstance(closed, ServerSentEvent) and closed.event == "closed"
    assert json.loads(str(closed.data))["reason"] == "account_suspended"
    with pytest.raises(StopAsyncIteration):
        await anext(events)


async def test_a_dashboard_sessions_expiry_closes_its_stream() -> None:
    broker = HandFedBroker()
    events = _events(broker, SessionAccess("digest", "acc_1", expires_in=0.05))
    await anext(events)
    assert await _closing(events) == "session_expired"


def test_the_accounts_state_comes_before_the_keys_and_sessions() -> None:
    state = AccessState(
        keys={
            "key_ok": KeyState(False, []),
            "key_gone": KeyState(True, []),
            "key_narrow": KeyState(False, ["10.0.0.0/8"]),
        },
        sessions={"s_ok"},
        accounts={"acc_ok": "active", "acc_held": "suspended", "acc_deleted": "deleted"},
    )
    assert state.reason(KeyAccess("key_ok", "acc_ok", "127.0.0.1")) is None
    assert state.reason(KeyAccess("key_gone", "acc_ok", "127.0.0.1")) == "key_revoked"
    assert state.reason(KeyAccess("key_unknown", "acc_ok", "127.0.0.1")) == "key_revoked"
    assert state.reason(KeyAccess("key_narrow", "acc_ok", "127.0.0.1")) == "ip_not_allowed"
    assert state.reason(KeyAccess("key_narrow", "acc_ok", "10.1.2.3")) is None
    assert state.reason(KeyAccess("key_gone", "acc_held", "127.0.0.1")) == "account_suspended"
    assert state.reason(KeyAccess("key_gone", "acc_deleted", "127.0.0.1")) == "account_deleted"
    assert state.reason(KeyAccess("key_ok", "acc_unknown", "127.0.0.1")) == "account_deleted"
    assert state.reason(SessionAccess("s_ok", "acc_ok", 60)) is None
    assert state.reason(SessionAccess("s_gone", "acc_ok", 60)) == "signed_out"
    assert state.reason(SessionAccess("s_gone", "acc_deleted", 60)) == "account_deleted"
    assert state.reason(SessionAccess("s_ok", "acc_held", 60)) == "account_suspended"


async def test_the_brokers_check_closes_only_the_streams_whose_access_ended(app: FastAPI, factory: Factory) -> None:
    """Through the database of each backend: one check for all open streams of the process."""
    kept_a, revoked_a, suspended_a = [await factory.account() for _ in range(3)]
    broker: SignalBroker = app.state.signal_broker
    database = app.state.database

    async def key_id(account_id: str) -> str:
        async with database.read_sessions() as session:
            keys = await key_service.list_keys(session, account_id=account_id)
        return next(k.id for k in keys if k.key_type == "full")

    try:
        streams = {
            name: await broker.subscribe(
                signal_service.SignalFilter(), KeyAccess(await key_id(account.id), account.id, "127.0.0.1")
            )
            for name, account in (("kept", kept_a), ("revoked", revoked_a), ("suspended", suspended_a))
        }
        plain = await broker.subscribe(signal_service.SignalFilter())  # nothing to re-check
        await broker.check_access()
        assert {name: s.closed for name, s in streams.items()} == dict.fromkeys(streams)
        now = datetime.now(UTC)
        async with database.write_sessions() as session, session.begin():
            access = streams["revoked"].access
            assert isinstance(access, KeyAccess)
            await key_service.revoke_key(session, key_id=access.key_id, now=now)
            await lifecycle.suspend(session, account_id=suspended_a.id, reason="test", actor="test", now=now)
        await broker.check_access()
        assert {name: s.closed for name, s in streams.items()} == {
            "kept": None,
            "revoked": "key_revoked",
            "suspended": "account_suspended",
        }
        assert plain.closed is None
    finally:
        await broker.stop()
