"""Reads from a real streaming replica (VPX_DATABASE_REPLICA_URLS): a primary of the test's own and a
replica made with `pg_basebackup -R` (bench/replica.py), the app pointed at both.

Where a read was served is shown two ways: statements counted on the replica's engine, and what
each answer contains while the replica's replay is paused (a contact or signal written to the
primary after the pause exists there only). Search and signal queries are served by the replica;
keys, reveals, purchases and a revealed contact's record never touch it; when the replica is
killed, search keeps answering from the primary, with one warning for the outage.

Runs where PostgreSQL's server binaries are installed (`pg_config --bindir`, /usr/lib/postgresql/N/bin)
and can be run (as root, as the `postgres` system user); skips saying why elsewhere."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from bench.replica import PairUnavailable, StreamingPair
from fastapi import FastAPI
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from tests.conftest import START, asgi_client, migrate, test_settings
from tests.factories import Factory
from tests.signals.support import event as signal_event
from tests.signals.support import ingest
from vpx import replicas as replica_module
from vpx.app import create_app
from vpx.clock import FixedClock
from vpx.db import Database
from vpx.replicas import Replica

pytestmark = pytest.mark.asyncio

WARM = {"timeline": "Q2"}  # a warm signal: its contact costs 3 credits (D9)


@pytest.fixture(scope="module")
def pair() -> Iterator[StreamingPair]:
    if "postgresql" not in os.environ.get("VPX_TEST_BACKENDS", "postgresql"):
        pytest.skip("replicas are PostgreSQL's, and VPX_TEST_BACKENDS leaves PostgreSQL out")
    try:
        started = StreamingPair.start()
    except PairUnavailable as exc:
        pytest.skip(f"no streaming replica can be started here: {exc}")
    try:
        migrate(started.primary_url())
        started.wait_caught_up()
        yield started
    finally:
        started.close()


@pytest.fixture
async def app(pair: StreamingPair) -> AsyncIterator[FastAPI]:
    settings = test_settings(pair.primary_url(), database_replica_urls=[pair.replica_url()], pool_size=2)
    application = create_app(settings, clock=FixedClock(START))
    yield application
    await application.state.database.dispose()


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(app) as http:
        yield http


@pytest.fixture
def factory(app: FastAPI) -> Factory:
    return Factory(app, FixedClock(START))


class Logged:
    """What vpx.replicas logs during a test."""

    def __init__(self, caplog: pytest.LogCaptureFixture) -> None:
        self.caplog = caplog

    @property
    def records(self) -> list[logging.LogRecord]:
        # Once each: the record may reach the handler twice (directly, and through the root logger
        # when the vpx loggers propagate).
        return list({id(record): record for record in self.caplog.records}.values())

    def containing(self, words: str) -> list[logging.LogRecord]:
        return [record for record in self.records if words in record.getMessage()]


@pytest.fixture
def logged(caplog: pytest.LogCaptureFixture) -> Iterator[Logged]:
    logger = logging.getLogger("vpx.replicas")
    logger.addHandler(caplog.handler)  # the vpx loggers may not propagate to the root logger
    caplog.set_level(logging.INFO, logger="vpx.replicas")
    try:
        yield Logged(caplog)
    finally:
        logger.removeHandler(caplog.handler)


def the_replica(app: FastAPI) -> Replica:
    database: Database = app.state.database
    assert database.replicas is not None
    [replica] = database.replicas.replicas
    return replica


class Statements:
    """Statements run on the replica's engine (the lag measurement apart)."""

    def __init__(self, app: FastAPI) -> None:
        self.count = 0
        self.engine = the_replica(app).engine.sync_engine
        event.listen(self.engine, "before_cursor_execute", self._seen)

    def _seen(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if "pg_is_in_recovery" not in statement:
            self.count += 1

    def close(self) -> None:
        event.remove(self.engine, "before_cursor_execute", self._seen)


@pytest.fixture
def on_replica(app: FastAPI) -> Iterator[Statements]:
    counter = Statements(app)
    yield counter
    counter.close()


@contextlib.asynccontextmanager
async def replay_paused(pair: StreamingPair) -> AsyncIterator[None]:
    """The replica's replay paused for the block: what the primary writes meanwhile exists only there."""
    engine = create_async_engine(pair.replica_url(), isolation_level="AUTOCOMMIT", poolclass=NullPool)
    try:
        async with engine.connect() as conn:
            await conn.execute(text("SELECT pg_wal_replay_pause()"))
        yield
    finally:
        async with engine.connect() as conn:
            await conn.execute(text("SELECT pg_wal_replay_resume()"))
        await engine.dispose()
    await pair.caught_up()


def _names(response: httpx.Response) -> set[str]:
    assert response.status_code == 200, response.text
    return {c["business_name"] for c in response.json()["contacts"]}


async def test_search_and_signal_queries_are_served_by_the_replica(
    pair: StreamingPair, client: httpx.AsyncClient, factory: Factory, app: FastAPI, on_replica: Statements
) -> None:
    contact = await factory.contact(business_name="Marigold Plumbing", city="Boulder")
    [signal] = (await ingest(app, [signal_event(contact_id=contact, business=None, evidence=WARM)])).signal_ids
    account = await factory.account()
    await pair.caught_up()

    search = await client.get("/api/v1/contacts/search", params={"q": "marigold"}, headers=account.headers("ro"))
    assert _names(search) == {"Marigold Plumbing"}
    posted = await client.post("/api/v1/contacts/search", json={"query": "marigold"}, headers=account.headers("ro"))
    assert _names(posted) == {"Marigold Plumbing"}
    after_search = on_replica.count
    assert after_search > 0

    listed = await client.get("/api/v1/signals", params={"state": "CO"}, headers=account.headers("ro"))
    assert listed.status_code == 200 and signal in [s["id"] for s in listed.json()["signals"]]
    one = await client.get(f"/api/v1/signals/{signal}", headers=account.headers("ro"))
    assert one.status_code == 200 and one.json()["contact"]["id"] == contact
    batch = await client.post(
        "/api/v1/signals/batch", json={"queries": [{"state": "CO"}]}, headers=account.headers("ro")
    )
    assert batch.status_code == 200 and signal in [s["id"] for s in batch.json()["results"][0]["signals"]]
    assert on_replica.count >= after_search + 3


async def test_what_spends_or_must_see_its_own_writes_never_reads_the_replica(
    pair: StreamingPair, client: httpx.AsyncClient, factory: Factory, app: FastAPI, on_replica: Statements
) -> None:
    async with replay_paused(pair):
        # Written to the primary after the replica stopped replaying: the replica has none of it.
        account = await factory.account(credits=10)
        contact = await factory.contact(business_name="Obsidian Roofing", city="Pueblo")
        [signal] = (await ingest(app, [signal_event(contact_id=contact, business=None, evidence=WARM)])).signal_ids
        before = on_replica.count

        # A key created a moment ago authenticates (its lookup reads the primary) ...
        search = await client.get("/api/v1/contacts/search", params={"q": "obsidian"}, headers=account.headers())
        # ... and the search, served by the replica, does not see the new contact yet.
        assert _names(search) == set()
        assert on_replica.count > before
        listed = await client.get("/api/v1/signals", params={"state": "CO"}, headers=account.headers())
        assert signal not in [s["id"] for s in listed.json()["signals"]]
        # A signal announced a moment ago is not a 404 for the replica's lag: the primary has it.
        one = await client.get(f"/api/v1/signals/{signal}", headers=account.headers())
        assert one.status_code == 200, one.text

        spent_from = on_replica.count
        reveal = await client.post("/api/v1/contacts/reveal", json={"contact_id": contact}, headers=account.headers())
        assert reveal.status_code == 200, reveal.text
        assert reveal.json()["credits_charged"] == 3  # the warm signal's price, read on the primary (D9)
        purchase = await client.post(f"/api/v1/signals/{signal}/purchase", headers=account.headers())
        assert purchase.status_code == 200 and purchase.headers["X-Credits-Charged"] == "0"  # D10
        record = await client.get(f"/api/v1/contacts/{contact}", headers=account.headers())
        assert record.status_code == 200 and record.json()["phone"] == "+13035550100"  # read-your-own-write
        key = await client.post("/api/v1/keys", json={"name": "new", "type": "ro"}, headers=account.headers("full"))
        assert key.status_code == 201, key.text
        fresh = key.json()["secret"]
        assert (await client.get("/api/v1/account", headers={"X-API-Key": fresh})).status_code == 200
        keys = await client.get("/api/v1/keys", headers=account.headers("full"))
        assert key.json()["id"] in [k["id"] for k in keys.json()["keys"]]
        assert on_replica.count == spent_from, "a spending or own-object request read the replica"

    # Replayed: the replica's search finds the contact now.
    again = await client.get("/api/v1/contacts/search", params={"q": "obsidian"}, headers=account.headers())
    assert _names(again) == {"Obsidian Roofing"}


async def test_a_replica_too_far_behind_is_passed_over_until_it_catches_up(
    pair: StreamingPair,
    client: httpx.AsyncClient,
    factory: Factory,
    app: FastAPI,
    logged: Logged,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    account = await factory.account()
    # Any lag is too much, measured on every read: the guard's decision without waiting 30 s.
    monkeypatch.setattr(replica_module, "MAX_LAG_SECONDS", 0.0)
    monkeypatch.setattr(replica_module, "LAG_CHECK_SECONDS", 0.0)
    async with replay_paused(pair):
        await factory.contact(business_name="Laggard Electric", city="Aurora")
        await pair.caught_up(replayed=False)  # received, not replayed: the replica is behind
        for _ in range(3):
            search = await client.get("/api/v1/contacts/search", params={"q": "laggard"}, headers=account.headers())
            assert _names(search) == {"Laggard Electric"}  # the primary answered
    lagging = logged.containing("behind the primary")
    assert len(lagging) == 1 and lagging[0].levelno == logging.WARNING, [r.getMessage() for r in logged.records]

    monkeypatch.setattr(replica_module, "MAX_LAG_SECONDS", 30.0)
    the_replica(app).resume_at = 0.0
    with_counter = Statements(app)
    try:
        search = await client.get("/api/v1/contacts/search", params={"q": "laggard"}, headers=account.headers())
        assert _names(search) == {"Laggard Electric"} and with_counter.count > 0
    finally:
        with_counter.close()
    assert logged.containing("has caught up")


async def test_search_answers_from_the_primary_while_the_replica_is_down(
    pair: StreamingPair,
    client: httpx.AsyncClient,
    factory: Factory,
    app: FastAPI,
    logged: Logged,
    on_replica: Statements,
) -> None:
    await factory.contact(business_name="Steadfast Heating", city="Golden")
    account = await factory.account()
    await pair.caught_up()
    params, headers = {"q": "steadfast"}, account.headers("ro")
    assert _names(await client.get("/api/v1/contacts/search", params=params, headers=headers)) == {"Steadfast Heating"}
    served = on_replica.count
    assert served > 0  # the replica's pool holds a connection now, about to die with its server

    pair.stop_replica()
    try:
        for _ in range(5):
            response = await client.get("/api/v1/contacts/search", params=params, headers=headers)
            assert _names(response) == {"Steadfast Heating"}
        signals = await client.get("/api/v1/signals", headers=headers)
        assert signals.status_code == 200, signals.text
        failed = logged.containing("failed")
        assert len(failed) == 1, [r.getMessage() for r in logged.records]  # one warning per outage
        assert failed[0].levelno == logging.WARNING and "its reads go to the primary" in failed[0].getMessage()
        assert on_replica.count <= served + 1  # at most the one statement that found it gone
        # Its pause over while it is still down: tried again, refused, the primary answers; no new warning.
        the_replica(app).resume_at = 0.0
        assert _names(await client.get("/api/v1/contacts/search", params=params, headers=headers)) == {
            "Steadfast Heating"
        }
        assert len(logged.containing("failed")) == 1 and the_replica(app).resume_at > 0
    finally:
        pair.start_replica()

    # Back: tried again once its pause is over (10 s; cut short here), and served by it again.
    await pair.caught_up()
    the_replica(app).resume_at = 0.0
    back = on_replica.count
    assert _names(await client.get("/api/v1/contacts/search", params=params, headers=headers)) == {"Steadfast Heating"}
    assert on_replica.count > back
    assert logged.containing("answers again")
