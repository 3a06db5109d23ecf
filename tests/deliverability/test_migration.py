"""The migration on a catalogue that is already there, on both databases: every active contact with an
email is found as `unknown`, changes not folded in yet included; the downgrade takes it all back."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from sqlalchemy import text

from tests.conftest import _postgres_reachable, create_postgres_database, drop_postgres_database, test_settings
from vpx.config import Settings
from vpx.contacts.search import postings
from vpx.db import Database
from vpx.migrations import alembic_config, upgrade

THIS = "20261201_email_deliverability"
BEFORE = "20261128_search_indexes_retired"
INSERT = text(
    "INSERT INTO contacts (business_name, name_key, city, city_key, state, country, industry, status, origin, "
    "created_at, updated_at, email) VALUES (:name, :name, 'Denver', 'denver', 'CO', 'US', 'dental', :status, "
    "'registry', :at, :at, :email)"
)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'vpx.db'}"
    reason = asyncio.run(_postgres_reachable())
    if reason:
        pytest.skip(reason)
    url = asyncio.run(create_postgres_database())
    request.addfinalizer(lambda: asyncio.run(drop_postgres_database(url)))
    return url


async def _catalogue(settings: Settings) -> None:
    database = Database(settings)
    rows: list[dict[str, Any]] = [
        {"name": "With Email", "status": "active", "email": "owner@acme.example"},
        {"name": "No Email", "status": "active", "email": None},
        {"name": "Gone Quiet", "status": "deactivated", "email": "owner@quiet.example"},
        {"name": "Renamed Later", "status": "active", "email": "owner@renamed.example"},
    ]
    at: Any = "2026-11-01 00:00:00" if settings.is_sqlite else datetime(2026, 11, 1, tzinfo=UTC)
    async with database.write_sessions() as session, session.begin():
        for row in rows:
            await session.execute(INSERT, {**row, "at": at})
        # The postings as they were built before this migration (vpx.contacts.search.postings read
        # without the email status).
        found = await session.execute(
            text("SELECT id, business_name, specialty, license_type, industry, city, state, status FROM contacts")
        )
        for chunk, bitmaps in postings.build_chunks(list(found)):
            await session.execute(
                text("INSERT INTO search_postings (term, chunk, ids, size) VALUES (:term, :chunk, :ids, :size)"),
                postings.posting_rows(chunk, bitmaps),
            )
        await session.execute(text("DELETE FROM search_changes"))  # as a rebuild leaves them
    await database.dispose()


async def _rename(settings: Settings) -> None:
    """A change the worker has not folded in yet when the migration runs."""
    database = Database(settings)
    async with database.write_sessions() as session, session.begin():
        await session.execute(text("UPDATE contacts SET business_name = 'Renamed Now' WHERE id = 4"))
    await database.dispose()


async def _unknown(settings: Settings, *, fold: bool) -> set[int]:
    database = Database(settings)
    try:
        if fold:
            while await postings.fold_changes(database):
                pass
        async with database.read_sessions() as session:
            found = await postings.read_terms(session, ["#em:unknown"])
            view = await postings.read_view(session)
        ids = set(found.bitmaps.get("#em:unknown", []))
        for contact_id, terms in view.pending.items():  # what a search does with pending changes
            ids.discard(contact_id)
            if "#em:unknown" in terms:
                ids.add(contact_id)
        return ids
    finally:
        await database.dispose()


async def _email_postings(settings: Settings) -> int:
    database = Database(settings)
    try:
        async with database.read_sessions() as session:
            return int(await session.scalar(text("SELECT count(*) FROM search_postings WHERE term LIKE '#em:%'")) or 0)
    finally:
        await database.dispose()


def _all_but_this(settings: Settings) -> list[str]:
    """The revisions to upgrade to for every migration but this one and those that build on it."""
    script = ScriptDirectory.from_config(alembic_config(settings))
    parents = {r.revision: set(r._all_down_revisions) for r in script.walk_revisions()}
    after = {THIS}
    while grown := {child for child, ups in parents.items() if ups & after and child not in after}:
        after |= grown
    kept = set(parents) - after
    targets = {r for r in kept if not any(r in parents[other] for other in kept)}
    # This one's own parent last: the migrations of the full upgrade that it follows run first.
    return [*sorted(targets - {BEFORE}), BEFORE]


def test_contacts_there_before_are_found_as_unknown_and_the_downgrade_takes_it_back(database_url: str) -> None:
    settings = test_settings(database_url)
    for target in _all_but_this(settings):
        command.upgrade(alembic_config(settings), target)
    asyncio.run(_catalogue(settings))
    asyncio.run(_rename(settings))
    upgrade(settings)
    assert asyncio.run(_unknown(settings, fold=False)) == {1, 4}
    assert asyncio.run(_unknown(settings, fold=True)) == {1, 4}

    command.downgrade(alembic_config(settings), BEFORE)
    assert asyncio.run(_email_postings(settings)) == 0
    upgrade(settings)
    assert asyncio.run(_unknown(settings, fold=True)) == {1, 4}
