"""The search postings (vpx.contacts.search.postings): folded in from the change log, or built in one
pass, they hold the same ids; changes from several writers at once lose nothing."""

from __future__ import annotations

import asyncio
import random

import pytest
from fastapi import FastAPI
from pyroaring import BitMap
from sqlalchemy import text

from tests.factories import Factory
from vpx.contacts.search import postings
from vpx.db import Database


async def _postings(database: Database) -> dict[str, BitMap]:
    found: dict[str, BitMap] = {}
    async with database.read_sessions() as session:
        for term, blob in await session.execute(text("SELECT term, ids FROM search_postings ORDER BY term, chunk")):
            found.setdefault(term, BitMap()).update(BitMap.deserialize(bytes(blob)))
    return found


async def _fold_all(database: Database) -> None:
    while await postings.fold_changes(database):
        pass


async def _rebuilt(database: Database) -> dict[str, BitMap]:
    async with database.write_sessions() as session, session.begin():
        await postings.rebuild(session)
    return await _postings(database)


async def test_folding_the_changes_in_gives_what_a_build_from_the_table_gives(app: FastAPI, factory: Factory) -> None:
    database: Database = app.state.database
    ids = await factory.demo(400)
    for contact_id in ids[:20]:
        await factory.deactivate(contact_id)
    for index, contact_id in enumerate(ids[20:40]):
        await factory.rename(contact_id, f"Renamed Harbor Works {index}")
    async with database.write_sessions() as session, session.begin():
        await session.execute(text("DELETE FROM contacts WHERE id = :id"), {"id": int(ids[50].removeprefix("ct_"))})
    async with database.read_sessions() as session:
        generation = (await postings.read_view(session)).generation
    await _fold_all(database)
    folded = await _postings(database)
    async with database.read_sessions() as session:
        view = await postings.read_view(session)
    assert view.pending == {} and view.generation > generation
    assert folded == await _rebuilt(database)
    assert int(ids[0].removeprefix("ct_")) not in folded["#a"]
    assert int(ids[50].removeprefix("ct_")) not in folded["#a"]
    assert len(folded["n:renamed"]) == 20


async def test_writers_and_merges_at_once_lose_no_change(app: FastAPI, factory: Factory) -> None:
    """Several connections change contacts while merges run: once the last change is folded in, the
    postings are what a build from the table gives (on PostgreSQL, truly concurrent transactions)."""
    database: Database = app.state.database
    ids = [int(i.removeprefix("ct_")) for i in await factory.demo(300)]
    await _fold_all(database)
    rng = random.Random(5)
    names = ["Summit Dental", "Harbor Plumbing", "Cedar Law Group", "Pine Roofing"]
    states = ["CA", "TX"]

    async def writer(seed: int) -> None:
        local = random.Random(seed)
        for _ in range(40):
            contact_id = local.choice(ids)
            async with database.writer_turn(), database.write_sessions() as session, session.begin():
                if local.random() < 0.2:
                    await session.execute(
                        text("UPDATE contacts SET status = :s WHERE id = :id"),
                        {"s": local.choice(["active", "deactivated"]), "id": contact_id},
                    )
                else:
                    await session.execute(
                        text("UPDATE contacts SET business_name = :n, state = :st WHERE id = :id"),
                        {"n": f"{local.choice(names)} {contact_id}", "st": local.choice(states), "id": contact_id},
                    )

    async def merger() -> None:
        for _ in range(30):
            await postings.fold_changes(database)
            await asyncio.sleep(rng.random() / 100)

    await asyncio.gather(*(writer(seed) for seed in range(4)), merger())
    await _fold_all(database)
    assert await _postings(database) == await _rebuilt(database)


async def test_a_build_leaves_postgresql_statistics_of_what_it_built(app: FastAPI, factory: Factory) -> None:
    """A bulk load's build of the postings analyses them: with no statistics (autovacuum off or not yet
    come) PostgreSQL planned a many-term read of a fresh 1M catalogue as a sequential scan, 1.4 s."""
    database: Database = app.state.database
    if database.is_sqlite:
        pytest.skip("PostgreSQL only: SQLite's planner keeps no statistics a build could leave stale")
    await factory.demo(50)
    count = text("SELECT coalesce(analyze_count, 0) FROM pg_stat_user_tables WHERE relname = 'search_postings'")
    async with database.read_sessions() as session:
        before = (await session.execute(count)).scalar_one()
    await _rebuilt(database)
    async with database.read_sessions() as session:
        after = (await session.execute(count)).scalar_one()
    assert after == before + 1
