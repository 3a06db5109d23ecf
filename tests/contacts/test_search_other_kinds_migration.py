"""Migration 20261204_search_other_kinds on both databases: a catalogue at the revision before gets the
``#other`` postings that a build from the table gives (the union of the other kinds' specialty words),
its changes waiting are folded with the new term, and the downgrade takes the term away again."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy as sa
from alembic import command
from pyroaring import BitMap

from tests.conftest import test_settings
from vpx.config import Settings
from vpx.contacts.search import postings
from vpx.contacts.search.terms import OTHER_KIND
from vpx.db import Database
from vpx.migrations import alembic_config, upgrade

THIS = "20261204_search_other_kinds"
BEFORE = "20261203_compliance_batches"
SPECIALTIES = ["Electrical Supplies", "Plumbing", "Accounting Software", "Electric Utility", None, "Staffing Agency"]

pytestmark = pytest.mark.asyncio


async def _add_contacts(database: Database, first: int, count: int) -> None:
    async with database.write_sessions() as session, session.begin():
        for i in range(first, first + count):
            await session.execute(
                sa.text(
                    "INSERT INTO contacts (business_name, name_key, industry, specialty, city, city_key, state, "
                    "country, status, origin, created_at, updated_at) VALUES (:name, :key, 'trades', :specialty, "
                    "'Springfield', 'springfield', 'IL', 'US', :status, 'registry', CURRENT_TIMESTAMP, "
                    "CURRENT_TIMESTAMP)"
                ),
                {
                    "name": f"Harbor Works {i}",
                    "key": f"harbor works {i}",
                    "specialty": SPECIALTIES[i % len(SPECIALTIES)],
                    "status": "deactivated" if i % 7 == 0 else "active",
                },
            )


async def _stored(database: Database, term: str) -> BitMap:
    found = BitMap()
    async with database.read_sessions() as session:
        for (blob,) in await session.execute(sa.text("SELECT ids FROM search_postings WHERE term = :t"), {"t": term}):
            found |= BitMap.deserialize(bytes(blob))
    return found


async def _rebuilt(database: Database, term: str) -> BitMap:
    async with database.write_sessions() as session:
        await postings.rebuild(session)
        found = BitMap()
        for (blob,) in await session.execute(sa.text("SELECT ids FROM search_postings WHERE term = :t"), {"t": term}):
            found |= BitMap.deserialize(bytes(blob))
        await session.rollback()
    return found


async def test_the_other_kinds_term_is_what_a_build_gives(empty_database: str) -> None:
    settings: Settings = test_settings(empty_database)
    await asyncio.to_thread(upgrade, settings)
    await asyncio.to_thread(command.downgrade, alembic_config(settings), BEFORE)
    database = Database(settings)
    try:
        await _add_contacts(database, 1, 60)
        async with database.write_sessions() as session, session.begin():
            # As the catalogue was: folded by the code before, which had no such term.
            await postings.rebuild(session)
            await session.execute(sa.text("DELETE FROM search_postings WHERE term = :t"), {"t": OTHER_KIND})
        await _add_contacts(database, 61, 12)  # and changes waiting
        assert await _stored(database, OTHER_KIND) == BitMap()

        await asyncio.to_thread(upgrade, settings)
        migrated = await _stored(database, OTHER_KIND)
        assert len(migrated) > 10
        while await postings.fold_changes(database):
            pass
        assert await _stored(database, OTHER_KIND) == await _rebuilt(database, OTHER_KIND)
        assert len(await _stored(database, OTHER_KIND)) > len(migrated)  # the waiting ones folded in

        await asyncio.to_thread(command.downgrade, alembic_config(settings), BEFORE)
        assert await _stored(database, OTHER_KIND) == BitMap()
    finally:
        await database.dispose()
