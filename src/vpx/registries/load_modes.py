"""How an import writes: in ``batches`` (a transaction each, the catalogue searchable throughout) or
as one ``bulk`` load (a single transaction with the search indexes set aside and rebuilt once).

Bulk is for a first load: a registry file into an empty catalogue, or one much smaller than the file.
Keeping six B-tree indexes and the search postings up to date row by row cost more than half of the
import (docs/benchmarks.md); building them once at the end costs a fraction of that. The indexes the
import itself reads — the primary keys, the phone and blocking indexes of entity resolution, the
registry's own ids — stay in place.

Safety: the indexes are dropped, the file loaded and the indexes rebuilt in one transaction, and both
databases make DDL transactional. A killed or failed bulk import rolls back whole: the catalogue is
as it was, with every index. The price, written down in docs/registries.md: nothing of the file is
committed until the end, and while the load runs the contacts table is locked — on PostgreSQL
searches and reveals wait for it (DROP INDEX takes an exclusive lock), on SQLite other writers wait
(readers still see the catalogue as it was before the import).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.search import postings as search_postings
from vpx.db import Database
from vpx.registries.reader import SNIFF_BYTES

BATCHES, BULK, AUTO = "batches", "bulk", "auto"
MODES = (BATCHES, BULK, AUTO)
# ``auto`` loads in bulk when the file has at least this many rows (estimated from its size) …
BULK_MIN_ROWS = 100_000
# … and the catalogue holds at most this share of that many contacts: rebuilding the indexes then
# costs little more than building them for the file alone.
BULK_MAX_SHARE = 0.1
# Indexes the import reads while it runs (entity resolution, upsert, replacing decision-makers).
KEPT_INDEXES = frozenset(
    ["ix_contacts_phone", "ix_contacts_block", "ix_decision_makers_registry_record_id"]
)  # fmt: skip
# Tables whose secondary indexes may be set aside; registry_records keeps all of its own (the
# upsert and status refresh look records up by registry id and by contact).
TABLES = ("contacts", "contact_sources", "decision_makers")
# Server memory for rebuilding the indexes (PostgreSQL's maintenance_work_mem, this transaction only).
REBUILD_MEMORY = "256MB"
# How long a bulk import waits for the contacts table on PostgreSQL before loading in batches instead.
LOCK_WAIT = "10s"


class LockBusy(Exception):
    """The contacts table could not be locked in time (a long search or report holds it)."""


@dataclass
class SetAside:
    """What a bulk load dropped, to restore before it commits."""

    indexes: list[tuple[str, str]] = field(default_factory=list)  # (name, CREATE statement)
    constraints: list[tuple[str, str, str]] = field(default_factory=list)  # (table, name, definition)
    triggers: list[tuple[str, str]] = field(default_factory=list)  # (name, CREATE statement)
    sqlite_cache: int | None = None


def estimated_rows(size: int, head: bytes) -> int:
    """The file's row count, from its size and the line length of its first 64 KiB."""
    lines = head.count(b"\n")
    if lines == 0:
        return 1 if size else 0
    sampled = len(head) if len(head) < SNIFF_BYTES else head.rindex(b"\n") + 1
    return max(1, round(size * lines / sampled))


async def choose(database: Database, *, requested: str, contacts: bool, rows: int) -> str:
    """The mode to load in: ``requested`` unless ``auto``; ``auto`` is bulk for a source of contacts
    whose file is large and at least ten times the catalogue's size."""
    if not contacts:
        return BATCHES  # other sources write tables of their own, without search indexes
    if requested != AUTO:
        return requested
    if rows < BULK_MIN_ROWS:
        return BATCHES
    cap = int(rows * BULK_MAX_SHARE) + 1
    async with database.read_sessions() as session:
        # Counting stops at the cap: a large catalogue is not counted through.
        present = (
            await session.execute(text("SELECT count(*) FROM (SELECT 1 FROM contacts LIMIT :cap) AS c"), {"cap": cap})
        ).scalar_one()
    return BULK if int(present) < cap else BATCHES


async def set_aside(session: AsyncSession) -> SetAside:
    """Drops the search indexes (and, on PostgreSQL, the foreign keys the import's own rows are
    checked by) inside the session's transaction."""
    if session.get_bind().dialect.name == "postgresql":
        return await _postgres_set_aside(session)
    return await _sqlite_set_aside(session)


async def restore(session: AsyncSession, aside: SetAside) -> None:
    """Rebuilds what ``set_aside`` dropped, before the transaction commits."""
    if session.get_bind().dialect.name == "postgresql":
        await _postgres_restore(session, aside)
    else:
        await _sqlite_restore(session, aside)


async def _postgres_set_aside(session: AsyncSession) -> SetAside:
    from sqlalchemy.exc import DBAPIError

    aside = SetAside()
    # Wait a while for the locks, not for ever: a bulk load that cannot start goes in batches.
    await session.execute(text(f"SET LOCAL lock_timeout = '{LOCK_WAIT}'"))
    try:
        await session.execute(text("LOCK TABLE contacts IN ACCESS EXCLUSIVE MODE"))
        result = await session.execute(
            text(
                "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
                "WHERE x.indrelid = ANY(CAST(:tables AS regclass[])) AND NOT x.indisunique AND NOT x.indisprimary "
                "ORDER BY i.relname"
            ),
            {"tables": list(TABLES)},
        )
        aside.indexes = [(name, sql) for name, sql in result if name not in KEPT_INDEXES]
        constraints = await session.execute(
            text(
                "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE contype = 'f' AND confrelid = 'contacts'::regclass "
                "AND conrelid = ANY(CAST(:tables AS regclass[])) ORDER BY conname"
            ),
            {"tables": ["registry_records", "contact_sources", "decision_makers"]},
        )
        aside.constraints = [(table, name, definition) for table, name, definition in constraints]
        for name, _ in aside.indexes:
            await session.execute(text(f'DROP INDEX "{name}"'))
        # The search postings are built once at the end, not logged row by row.
        await session.execute(text("ALTER TABLE contacts DISABLE TRIGGER search_changes"))
        for table, name, _ in aside.constraints:
            await session.execute(text(f'ALTER TABLE "{table}" DROP CONSTRAINT "{name}"'))
    except DBAPIError as exc:
        if "lock timeout" in str(exc).lower():
            raise LockBusy(str(exc)) from exc
        raise
    await session.execute(text("SET LOCAL lock_timeout TO DEFAULT"))
    return aside


async def _postgres_restore(session: AsyncSession, aside: SetAside) -> None:
    await session.execute(text(f"SET LOCAL maintenance_work_mem = '{REBUILD_MEMORY}'"))
    for _, sql in aside.indexes:
        await session.execute(text(sql))
    for table, name, definition in aside.constraints:
        # Checked once, by one join, instead of row by row.
        await session.execute(text(f'ALTER TABLE "{table}" ADD CONSTRAINT "{name}" {definition}'))
    await session.execute(text("ALTER TABLE contacts ENABLE TRIGGER search_changes"))
    await search_postings.rebuild(session)
    await session.execute(text("ANALYZE contacts"))


async def _sqlite_set_aside(session: AsyncSession) -> SetAside:
    aside = SetAside()
    connection = await session.connection()

    async def rows(sql: str, *parameters: Any) -> list[Any]:
        return list(await connection.exec_driver_sql(sql, parameters))

    # The search postings' change log is kept by triggers; only those are set aside (any other
    # trigger on contacts stays and fires as usual).
    aside.triggers = [
        (name, sql)
        for name, sql in await rows(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'contacts'"
        )
        if "search_changes" in sql
    ]
    marks = ", ".join("?" for _ in TABLES)
    aside.indexes = [
        (name, sql)
        for name, sql in await rows(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ({marks}) "
            "AND sql IS NOT NULL ORDER BY name",
            *TABLES,
        )
        if name not in KEPT_INDEXES and not sql.upper().startswith("CREATE UNIQUE")
    ]
    # A larger page cache for the load (32 MiB instead of 2): the kept indexes and the rebuild
    # touch pages all over the file. Put back when the load commits (imports run in processes of
    # their own, the CLI's, so a failed load's connection goes with its process).
    aside.sqlite_cache = int((await rows("PRAGMA cache_size"))[0][0])
    await connection.exec_driver_sql("PRAGMA cache_size = -32768")
    for name, _ in aside.triggers:
        await connection.exec_driver_sql(f'DROP TRIGGER "{name}"')
    for name, _ in aside.indexes:
        await connection.exec_driver_sql(f'DROP INDEX "{name}"')
    return aside


async def _sqlite_restore(session: AsyncSession, aside: SetAside) -> None:
    connection = await session.connection()
    for _, sql in aside.indexes:
        await connection.exec_driver_sql(sql)
    for _, sql in aside.triggers:
        await connection.exec_driver_sql(sql)
    await search_postings.rebuild(session)
    if aside.sqlite_cache is not None:
        await connection.exec_driver_sql(f"PRAGMA cache_size = {aside.sqlite_cache}")
