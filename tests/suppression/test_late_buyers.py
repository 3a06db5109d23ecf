"""Buyers a new entry's own transaction cannot see are told all the same, once: a reveal that read
the list before the entry committed and charged after the entry read its buyers (the worker's sweep
tells it, on both databases; on PostgreSQL the real interleaving through the reveal endpoint, the
one-statement charge included), and the buyers a merge of two contacts brings to a suppressed contact
(its own, the other's, or an email it takes over)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine

from tests.factories import Factory
from tests.factories import TestAccount as Account
from tests.sequences.smtp_server import SmtpSink
from tests.suppression.support import buyer, events_at, feed, mailbox_and_sequence, reveal
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliver_round
from vpx.clock import FixedClock
from vpx.models import Enrollment, PossibleDuplicate, Reveal
from vpx.registries import duplicates
from vpx.suppression import sweep
from vpx.worker.loop import Worker

pytestmark = pytest.mark.asyncio

# Every way a reveal is written: the reveal endpoint and the dashboard, batch reveals, signal
# purchases, auto-buy rules.
CHANNELS = ("reveal", "batch", "purchase", "auto_buy")


def number(contact_id: str) -> int:
    return int(contact_id.removeprefix("ct_"))


async def reveal_row(factory: Factory, account: Account, contact_id: str, channel: str) -> None:
    """The reveal as a racing charge leaves it: committed after the entry read the contact's buyers."""
    async with factory.database.write_sessions() as session, session.begin():
        session.add(
            Reveal(
                account_id=account.id,
                contact_id=number(contact_id),
                credits_charged=1,
                channel=channel,
                created_at=factory.clock.now(),
            )
        )


async def sweep_now(app: FastAPI) -> int:
    return await sweep.sweep_recent(app.state.database, now=app.state.clock.now())


async def told(client: httpx.AsyncClient, account: Account) -> list[str]:
    return [item["contact_id"] for item in (await feed(client, account))["suppressions"]]


async def test_a_reveal_that_raced_the_entry_is_told_by_the_sweep_once(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, receiver: Receiver, clock: FixedClock
) -> None:
    contact = await factory.contact()
    await factory.suppress("phone", "+13035550100", reason="do_not_contact")
    assert await sweep_now(app) == 0  # an entry with no buyer: nothing to tell
    accounts = [await buyer(client, factory, receiver, channel) for channel in CHANNELS]
    for account, channel in zip(accounts, CHANNELS, strict=True):
        await reveal_row(factory, account, contact, channel)
    for account in accounts:
        assert await told(client, account) == []  # what the race leaves: neither refused nor told

    clock.set(clock.now() + timedelta(seconds=30))
    assert await sweep_now(app) == len(CHANNELS)
    assert await deliver_round(app) == len(CHANNELS)
    for account, channel in zip(accounts, CHANNELS, strict=True):
        [event] = events_at(receiver, f"/{channel}")
        assert event["type"] == "contact.suppressed"
        assert event["data"]["contact_id"] == contact and event["data"]["reason"] == "do_not_contact"
        assert await told(client, account) == [contact]

    # Once: the next sweeps find every buyer told.
    assert await sweep_now(app) == 0
    assert await deliver_round(app) == 0
    assert all(len(events_at(receiver, f"/{channel}")) == 1 for channel in CHANNELS)


async def test_the_sweep_stops_an_enrollment_made_in_the_race(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, receiver: Receiver, smtp_sink: SmtpSink
) -> None:
    """The racing buyer enrolled the contact before the entry committed (the entry's own stop of
    enrollments came first): the late notice ends that enrollment too."""
    account = await buyer(client, factory, receiver, "buyer")
    contact = await factory.contact(email="owner@acme.example")
    sequence_id = await mailbox_and_sequence(client, account, smtp_sink)
    await factory.suppress("contact", contact)
    await reveal_row(factory, account, contact, "reveal")
    now = factory.clock.now()
    async with factory.database.write_sessions() as session, session.begin():
        session.add(
            Enrollment(
                id="en_race",
                account_id=account.id,
                sequence_id=sequence_id,
                version=1,
                contact_id=number(contact),
                email="owner@acme.example",
                status="active",
                step=0,
                next_due_at=now,
                unsubscribe_digest="0" * 64,
                created_at=now,
                updated_at=now,
            )
        )
    assert await sweep_now(app) == 1
    async with factory.database.read_sessions() as session:
        stopped = await session.get(Enrollment, "en_race")
        assert stopped is not None and (stopped.status, stopped.stop_reason) == ("stopped", "suppressed")


async def test_the_sweep_looks_back_a_documented_window_only(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, receiver: Receiver, clock: FixedClock
) -> None:
    account = await buyer(client, factory, receiver, "buyer")
    contact = await factory.contact()
    await factory.suppress("contact", contact)
    await reveal_row(factory, account, contact, "reveal")
    clock.set(clock.now() + sweep.WINDOW + timedelta(seconds=1))
    assert await sweep_now(app) == 0  # long past any reveal's race: not read again


async def test_the_worker_sweeps_on_its_own(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, receiver: Receiver
) -> None:
    account = await buyer(client, factory, receiver, "buyer")
    contact = await factory.contact()
    await factory.suppress("contact", contact)
    await reveal_row(factory, account, contact, "reveal")
    worker = Worker(
        app.state.database,
        app.state.settings,
        clock=app.state.clock,
        enrichment=(app.state.enrichment, app.state.secrets),
    )
    running = asyncio.create_task(worker.run())
    try:
        await receiver.wait_for(1, path="/buyer", limit=10)
    finally:
        worker.stop()
        await running
    [event] = events_at(receiver, "/buyer")
    assert event["type"] == "contact.suppressed" and event["data"]["contact_id"] == contact


# --- The real interleaving on PostgreSQL ---


@pytest.fixture
async def account_rows_held(app: FastAPI, database_url: str, backend: str) -> AsyncIterator[AsyncConnection]:
    """A connection of its own, in a transaction, to hold account rows (PostgreSQL only)."""
    if backend != "postgresql":
        pytest.skip("the interleaving is held with PostgreSQL's row locks; SQLite's is simulated above")
    engine = create_async_engine(database_url)
    try:
        async with engine.connect() as connection:
            yield connection
    finally:
        await engine.dispose()


async def _waiting_for_locks(app: FastAPI, count: int) -> None:
    async with app.state.database.autocommit_engine.connect() as watcher:
        for _ in range(200):
            waiting = await watcher.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
            )
            if waiting == count:
                return
            await asyncio.sleep(0.05)
    raise AssertionError(f"expected {count} reveals waiting on the held account rows")


async def test_reveals_charged_after_the_entry_read_its_buyers_are_told_late_on_postgresql(
    client: httpx.AsyncClient,
    factory: Factory,
    app: FastAPI,
    receiver: Receiver,
    account_rows_held: AsyncConnection,
) -> None:
    # One buyer without a webhook (its charge is the one autocommitted statement), one with (its
    # charge runs in the request's transaction).
    plain = await factory.account(credits=10, name="plain")
    subscribed = await buyer(client, factory, receiver, "subscribed")
    contact = await factory.contact()
    held = account_rows_held
    await held.begin()
    await held.execute(
        text("SELECT id FROM accounts WHERE id IN (:a, :b) FOR UPDATE"), {"a": plain.id, "b": subscribed.id}
    )
    reveals = [asyncio.create_task(reveal(client, account, contact)) for account in (plain, subscribed)]
    # Both reveals have read the list (the contact was not on it) and wait to charge.
    await _waiting_for_locks(app, 2)
    await factory.suppress("contact", contact)  # commits; its buyers as it sees them: none
    await held.rollback()
    await asyncio.gather(*reveals)  # charged: the race happened
    async with factory.database.read_sessions() as session:
        assert sorted(await session.scalars(select(Reveal.account_id))) == sorted([plain.id, subscribed.id])
    assert await told(client, plain) == [] and await told(client, subscribed) == []

    assert await sweep_now(app) == 2
    assert await deliver_round(app) == 1  # the subscribed buyer's event; the other reads its feed
    [event] = events_at(receiver, "/subscribed")
    assert event["data"]["contact_id"] == contact
    assert await told(client, plain) == [contact] and await told(client, subscribed) == [contact]
    assert await sweep_now(app) == 0 and await deliver_round(app) == 0


# --- Merges ---


async def _merge(factory: Factory, kept: str, gone: str) -> None:
    """The operator merges ``gone`` into ``kept`` (as `vpx registries duplicates merge`)."""
    async with factory.database.write_sessions() as session, session.begin():
        pair = PossibleDuplicate(
            contact_id=number(kept),
            other_contact_id=number(gone),
            reason="phone",
            name_score=100,
            found_by="test",
            status="open",
            created_at=factory.clock.now(),
        )
        session.add(pair)
        await session.flush()
        await duplicates.merge(session, f"pd_{pair.id}", by="test", now=factory.clock.now())


async def test_a_merge_tells_the_buyers_of_both_when_the_other_was_suppressed(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, receiver: Receiver
) -> None:
    kept = await factory.contact(business_name="Peak Roofing LLC", phone="+13035550122", email=None)
    gone = await factory.contact(business_name="Peak Roofing", phone="+13035550133", email=None)
    of_kept = await buyer(client, factory, receiver, "kept")
    of_gone = await buyer(client, factory, receiver, "gone")
    of_both = await buyer(client, factory, receiver, "both")
    await reveal(client, of_kept, kept)
    await reveal(client, of_gone, gone)
    await reveal(client, of_both, kept)
    await reveal(client, of_both, gone)
    await factory.suppress("contact", gone)
    assert await deliver_round(app) == 2  # the other's buyers, of the other

    await _merge(factory, kept, gone)
    # The entry follows the kept contact; every buyer of it now, the other's included, is told of it.
    assert await deliver_round(app) == 3
    assert [e["data"]["contact_id"] for e in events_at(receiver, "/kept")] == [kept]
    assert [e["data"]["contact_id"] for e in events_at(receiver, "/gone")] == [gone, kept]
    assert [e["data"]["contact_id"] for e in events_at(receiver, "/both")] == [gone, kept]
    assert await told(client, of_kept) == [kept]
    assert await told(client, of_gone) == [kept, gone]
    refused = await client.post(f"/api/v1/contacts/{kept}/reveal", headers=(await factory.account(credits=5)).headers())
    assert refused.status_code == 451
    assert await sweep_now(app) == 0 and await deliver_round(app) == 0  # nobody twice


async def test_a_merge_tells_the_other_s_buyers_of_the_kept_contact_s_entry(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, receiver: Receiver
) -> None:
    kept = await factory.contact(business_name="Peak Roofing LLC", phone="+13035550122", email=None)
    gone = await factory.contact(business_name="Peak Roofing", phone="+13035550133", email=None)
    of_kept = await buyer(client, factory, receiver, "kept")
    of_gone = await buyer(client, factory, receiver, "gone")
    await reveal(client, of_kept, kept)
    await reveal(client, of_gone, gone)
    await factory.suppress("contact", kept)
    assert await deliver_round(app) == 1

    await _merge(factory, kept, gone)
    assert await deliver_round(app) == 1
    assert [e["data"]["contact_id"] for e in events_at(receiver, "/kept")] == [kept]  # not again
    assert [e["data"]["contact_id"] for e in events_at(receiver, "/gone")] == [kept]
    assert await told(client, of_gone) == [kept]


async def test_a_merge_tells_the_kept_contact_s_buyers_of_an_email_it_takes_over(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, receiver: Receiver
) -> None:
    kept = await factory.contact(business_name="Peak Roofing LLC", phone="+13035550122", email=None)
    gone = await factory.contact(business_name="Peak Roofing", phone="+13035550133", email="Owner@PeakRoofing.example")
    of_kept = await buyer(client, factory, receiver, "kept")
    await reveal(client, of_kept, kept)
    await factory.suppress("email", "owner@peakroofing.example")
    assert await deliver_round(app) == 0  # the kept contact has no email yet

    await _merge(factory, kept, gone)
    assert await deliver_round(app) == 1
    [event] = events_at(receiver, "/kept")
    assert event["data"]["contact_id"] == kept
    assert await told(client, of_kept) == [kept]
