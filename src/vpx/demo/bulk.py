"""Loading a large demo catalogue fast (the 1,000,000-contact benchmark catalogue).

The search postings' change log is set aside during the load (on SQLite with the other triggers and
indexes, rebuilt once at the end, the columns the contacts' trigger computes, DROP's hashes and the
phone's Do-Not-Call state, filled in one statement before; on PostgreSQL rows go in with COPY) and
the postings of what was loaded are built in one pass afterwards.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from itertools import islice
from typing import Any

from sqlalchemy import text

from vpx.compliance import hashing
from vpx.compliance.dnc.service import phone_dnc_sql
from vpx.contacts.catalogue import contact_row, vocabulary
from vpx.contacts.search import backend_for
from vpx.contacts.search import postings as search_postings
from vpx.db import Database
from vpx.demo.generator import demo_contacts

COLUMNS = (
    "business_name", "name_key", "street", "city", "city_key", "state", "postal_code", "country", "phone",
    "email", "website", "website_domain", "industry", "specialty", "specialty_key", "license_type",
    "license_type_key", "license_number", "license_state", "status", "origin", "intent_level",
    "publisher_account_id", "created_at", "updated_at",
)  # fmt: skip


def _rows(count: int, seed: int, now: datetime) -> Iterator[dict[str, Any]]:
    for fields in demo_contacts(count, seed=seed):
        yield contact_row(fields, origin="demo", now=now)


async def _batches(count: int, seed: int, now: datetime, chunk: int) -> AsyncIterator[list[dict[str, Any]]]:
    """Batches of rows, the next one generated in a thread while the caller writes the current one
    (the database driver waits on I/O meanwhile, so generation and writing overlap)."""
    rows = _rows(count, seed, now)

    def take() -> list[dict[str, Any]]:
        return list(islice(rows, chunk))

    pending = asyncio.create_task(asyncio.to_thread(take))
    while batch := await pending:
        pending = asyncio.create_task(asyncio.to_thread(take))
        yield batch


async def bulk_load_demo(database: Database, *, count: int, seed: int, now: datetime, chunk: int = 50_000) -> int:
    """Appends ``count`` generated demo contacts; returns how many were written."""
    async with database.read_sessions() as session:
        first = int((await session.execute(text("SELECT coalesce(max(id), 0) + 1 FROM contacts"))).scalar_one())
    if database.is_sqlite:
        written = await _load_sqlite(database, count=count, seed=seed, now=now, chunk=chunk)
    else:
        written = await _load_postgres(database, count=count, seed=seed, now=now, chunk=chunk)
    # The search postings of what was loaded, built in one pass (the change log was set aside).
    async with database.writer_turn(), database.write_sessions() as session, session.begin():
        await search_postings.rebuild(session, from_id=first)
    return written


async def _load_sqlite(database: Database, *, count: int, seed: int, now: datetime, chunk: int) -> int:
    placeholders = ", ".join("?" for _ in COLUMNS)
    insert = f"INSERT INTO contacts ({', '.join(COLUMNS)}) VALUES ({placeholders})"
    naive_now = now.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")  # as UtcDateTime stores it
    written = 0
    terms: set[str] = set()
    async with database.write_engine.connect() as conn:
        raw = (await conn.get_raw_connection()).driver_connection
        assert raw is not None
        triggers = await (
            await raw.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'contacts'")
        ).fetchall()
        indexes = await (
            await raw.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'contacts' AND sql IS NOT NULL"
            )
        ).fetchall()
        await raw.execute("BEGIN IMMEDIATE")
        before = (await (await raw.execute("SELECT coalesce(max(id), 0) FROM contacts")).fetchone() or (0,))[0]
        # Triggers and indexes are set aside and rebuilt once: ten times faster than row by row.
        for name, _ in triggers:
            await raw.execute(f'DROP TRIGGER "{name}"')
        for name, _ in indexes:
            await raw.execute(f'DROP INDEX "{name}"')
        async for batch in _batches(count, seed, now, chunk):
            terms |= vocabulary(batch)
            await raw.executemany(
                insert,
                [tuple(naive_now if c in ("created_at", "updated_at") else r[c] for c in COLUMNS) for r in batch],
            )
            written += len(batch)
        # What the contacts' trigger computes for each new row (migration 20261203_compliance): DROP's
        # hashes of the email and phone, and the phone's Do-Not-Call state, in one pass.
        await raw.execute(
            f"UPDATE contacts SET email_hash = {hashing.SQL_EMAIL_HASH}(email), "
            f"phone_hash = {hashing.SQL_PHONE_HASH}(phone), phone_dnc = {phone_dnc_sql('sqlite')} WHERE id > ?",
            (before,),
        )
        for _, sql in indexes:
            await raw.execute(sql)
        for _, sql in triggers:
            await raw.execute(sql)
        await raw.executemany("INSERT OR IGNORE INTO search_terms (term) VALUES (?)", [(t,) for t in sorted(terms)])
        await raw.execute("COMMIT")
    return written


async def _load_postgres(database: Database, *, count: int, seed: int, now: datetime, chunk: int) -> int:
    written = 0
    terms: set[str] = set()
    async with database.write_engine.connect() as conn:
        raw = (await conn.get_raw_connection()).driver_connection
        assert raw is not None
        async with raw.transaction():
            await raw.execute("ALTER TABLE contacts DISABLE TRIGGER search_changes")
            rows = _rows(count, seed, now)
            while batch := list(islice(rows, chunk)):
                terms |= vocabulary(batch)
                await raw.copy_records_to_table(
                    "contacts", columns=list(COLUMNS), records=[tuple(r[c] for c in COLUMNS) for r in batch]
                )
                written += len(batch)
            await raw.execute("ALTER TABLE contacts ENABLE TRIGGER search_changes")
    async with database.write_sessions() as session, session.begin():
        await backend_for("postgresql").add_terms(session, terms)
    async with database.write_engine.connect() as conn:
        await conn.execution_options(isolation_level="AUTOCOMMIT")
        await conn.execute(text("ANALYZE contacts"))
        await conn.execute(text("ANALYZE search_terms"))
    return written
