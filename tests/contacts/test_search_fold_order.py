"""Why the PostgreSQL index went wrong and stayed wrong: a fold read each contact as it is now but
folded only the changes among the first of the batch, so a later change of the same contact, left
pending, was folded afterwards from a "before" the postings no longer held, and a term the contact
had lost (an email status it had passed through) stayed in the postings for good.

Reproduced here deterministically (a batch that cuts one contact's changes in two) and for real on
PostgreSQL (the worker's email checks committing while folds of small batches run, many rounds).
Both compare the postings with a build from the table."""

from __future__ import annotations

import asyncio

import pytest
from fastapi import FastAPI
from pyroaring import BitMap
from sqlalchemy import text, update

from tests.factories import Factory, details
from vpx.contacts.search import postings
from vpx.db import Database
from vpx.models import Contact

pytestmark = pytest.mark.asyncio


async def stored(database: Database) -> dict[str, BitMap]:
    found: dict[str, BitMap] = {}
    async with database.read_sessions() as session:
        for term, blob in await session.execute(text("SELECT term, ids FROM search_postings ORDER BY term, chunk")):
            found.setdefault(term, BitMap()).update(BitMap.deserialize(bytes(blob)))
    return {term: bitmap for term, bitmap in found.items() if bitmap}


async def built(database: Database) -> dict[str, BitMap]:
    async with database.read_sessions() as session:
        rows = list(await session.execute(postings._CONTACTS_FROM, {"low": 0, "high": 2**32}))
    found: dict[str, BitMap] = {}
    for _, bitmaps in postings.build_chunks(rows):
        for term, bitmap in bitmaps.items():
            found.setdefault(term, BitMap()).update(bitmap)
    return found


async def set_status(database: Database, contact_id: int, status: str) -> None:
    async with database.write_sessions() as session, session.begin():
        await session.execute(update(Contact).where(Contact.id == contact_id).values(email_status=status))


async def fold(database: Database, limit: int) -> int:
    async with database.writer_turn(), database.write_sessions() as session, session.begin():
        merged, _ = await postings.merge(session, limit=limit)
    return merged


async def test_a_batch_that_cuts_a_contacts_changes_in_two_leaves_no_stale_term(app: FastAPI, factory: Factory) -> None:
    database: Database = app.state.database
    contact = int((await factory.contact(**details(1))).removeprefix("ct_"))
    await set_status(database, contact, "valid_syntax")  # pending: the insert, then this
    assert await fold(database, limit=1) >= 1  # the first change's batch
    await set_status(database, contact, "no_mx")
    while await fold(database, limit=100):  # both remaining changes in one batch
        pass
    terms = await stored(database)
    assert contact in terms["#em:no_mx"]
    assert contact not in terms.get("#em:valid_syntax", BitMap())
    assert terms == await built(database)


async def test_email_checks_committing_during_folds_leave_the_postings_right(
    app: FastAPI, factory: Factory, backend: str
) -> None:
    """The probe's interleaving: statuses move unknown -> valid_syntax -> no_mx in transactions of
    their own while folds of small batches run on other connections at the same time."""
    if backend != "postgresql":
        pytest.skip("concurrent writers and folds on separate connections: PostgreSQL's interleaving")
    database: Database = app.state.database
    ids = [int(c.removeprefix("ct_")) for c in await factory.demo(300)]

    async def checks() -> None:
        # Each few contacts' statuses move twice in a row, in the order the folds walk the inserts.
        for start in range(0, len(ids), 3):
            for status in ("valid_syntax", "no_mx"):
                async with database.write_sessions() as session, session.begin():
                    await session.execute(
                        update(Contact)
                        .where(Contact.id.in_(ids[start : start + 3]), Contact.email.is_not(None))
                        .values(email_status=status)
                    )
                await asyncio.sleep(0.01)

    async def folds(stop: asyncio.Event, limit: int) -> None:
        while not stop.is_set():
            await fold(database, limit=limit)
            await asyncio.sleep(0)

    stop = asyncio.Event()
    folders = [asyncio.create_task(folds(stop, limit)) for limit in (3, 60)]
    await checks()
    stop.set()
    await asyncio.gather(*folders)
    while await fold(database, limit=50):
        pass
    terms = await stored(database)
    assert not terms.get("#em:valid_syntax") and not terms.get("#em:unknown")
    assert terms == await built(database)
