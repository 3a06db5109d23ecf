"""How fast the search postings take in a backlog of changes, on SQLite or PostgreSQL:

    .venv/bin/python -m bench.search_folds [--database sqlite|postgresql] [--contacts 1000000]
        [--changes 1000000] [--keep]

A catalogue of --contacts demo contacts is built (the bench loader: postings built in one pass) in a
database of its own (``vpx_bench_folds``; --keep reuses it when it has that many contacts). Then one
statement changes --changes of them through the table (each contact's email status and, for every
tenth, its name), so the triggers log one change per contact as any writer would, and the postings
take the backlog in the way the worker does (``fold_changes`` until nothing is left), timed.

Printed: the backlog, the time to fold it and the rate; then that the postings equal a build from
the table. Goal: 1,000,000 changes in 60 s or less.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from datetime import UTC, datetime

from pyroaring import BitMap
from sqlalchemy import func, select, text

from bench.common import fresh_database, postgres_url, sqlite_url
from vpx.config import Settings
from vpx.contacts.search import postings
from vpx.db import Database
from vpx.demo.bulk import bulk_load_demo
from vpx.models import Contact

DB_NAME = "vpx_bench_folds"
GOAL_SECONDS = 60.0


async def catalogue(backend: str, contacts: int, keep: bool) -> str:
    url = sqlite_url(DB_NAME) if backend == "sqlite" else postgres_url(DB_NAME)
    if keep:
        try:
            database = Database(Settings(database_url=url), pool=False)
            async with database.read_sessions() as session:
                found = await session.scalar(select(func.count()).select_from(Contact))
            await database.dispose()
            if found == contacts:
                return url
        except Exception:  # no such database yet: build it
            pass
    url = await asyncio.to_thread(fresh_database, backend, DB_NAME)
    database = Database(Settings(database_url=url), pool=False)
    started = time.perf_counter()
    await bulk_load_demo(database, count=contacts, seed=11, now=datetime.now(UTC))
    print(f"built {contacts:,} contacts in {time.perf_counter() - started:.1f} s")
    await database.dispose()
    return url


async def backlog(database: Database, changes: int, round_: int) -> int:
    """One statement changing ``changes`` contacts (a status each, a name for every tenth)."""
    status = ("valid_syntax", "no_mx", "mx_found")[round_ % 3]
    async with database.write_sessions() as session, session.begin():
        await session.execute(
            text(
                "UPDATE contacts SET email_status = :status, business_name = CASE WHEN id % 10 = 0 "
                "THEN business_name || ' ' || :word ELSE business_name END WHERE id <= :n AND email IS NOT NULL"
            ),
            {"status": status, "word": f"renamed{round_}", "n": changes},
        )
        pending = await session.scalar(text("SELECT count(*) FROM search_changes"))
    return int(pending or 0)


async def check(database: Database) -> bool:
    stored: dict[str, BitMap] = {}
    async with database.read_sessions() as session:
        for term, blob in await session.execute(text("SELECT term, ids FROM search_postings")):
            stored.setdefault(term, BitMap()).update(BitMap.deserialize(bytes(blob)))
        built: dict[str, BitMap] = {}
        high = int(await session.scalar(text("SELECT max(id) FROM contacts")) or 0) + 1
        step = 1 << postings.CHUNK_BITS
        for low in range(0, high, step):
            rows = list(await session.execute(postings._CONTACTS_FROM, {"low": low, "high": min(high, low + step)}))
            for _, bitmaps in postings.build_chunks(rows):
                for term, bitmap in bitmaps.items():
                    built.setdefault(term, BitMap()).update(bitmap)
    return {t: b for t, b in stored.items() if b} == built


async def run(args: argparse.Namespace) -> None:
    url = await catalogue(args.database, args.contacts, args.keep)
    database = Database(Settings(database_url=url), pool=False)
    try:
        pending = await backlog(database, args.changes, int(time.time()))
        print(f"{args.database}: backlog of {pending:,} changes")
        started = time.perf_counter()
        rounds = 0
        while await postings.fold_changes(database):
            rounds += 1
        elapsed = time.perf_counter() - started
        print(
            f"folded {pending:,} changes in {rounds} folds, {elapsed:.1f} s: {pending / elapsed:,.0f} changes/s "
            f"(goal: {args.changes:,} in {GOAL_SECONDS:g} s)"
        )
        if args.check:
            print(f"postings equal a build from the table: {await check(database)}")
    finally:
        await database.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--contacts", type=int, default=1_000_000)
    parser.add_argument("--changes", type=int, default=1_000_000)
    parser.add_argument("--keep", action="store_true", help="reuse the catalogue when it has --contacts contacts")
    parser.add_argument("--check", action="store_true", help="compare the postings with a build from the table")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
