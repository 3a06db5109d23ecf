"""An index that checks itself: the postings compared with the contacts table, whole or by sample,
and what is wrong rewritten from the table (``vpx search check [--repair] [--sample N]``, and the
worker's scheduled sampled check; docs/search.md).

Every comparison reads the postings, the contacts and the changes waiting to be folded in one
snapshot (PostgreSQL: a REPEATABLE READ transaction; SQLite: a read transaction), and leaves out the
contacts that have changes waiting: the postings hold them as they were before those changes, which
the table no longer says.

- The whole check builds each chunk of ids' postings from the table and compares every term of it.
- A sample checks S random contacts (each term the table gives them, and every filter term of their
  chunk, both ways) and R random posting rows (up to 50 of their ids each have the term): a stale
  word left by a rename is found by the second, a missing one by the first.

A repair rewrites the (term, chunk) rows found wrong from the table, under the folds' lock (a fold
never interleaves), keeping what the postings hold for contacts whose changes still wait.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pyroaring import BitMap
from sqlalchemy import text, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from vpx import metrics
from vpx.contacts.search import postings
from vpx.db import Database, driver_datetime
from vpx.models import SearchState

# Filter terms a sample checks both ways in the chunks of its contacts (words are checked through
# the contacts' own terms and random rows).
FACETS = ("#a", "#st:", "#in:", "#em:")
PROBED_IDS = 50
SHOWN_IDS = 20
FOLD_LOCK = 7372461  # vpx.contacts.search.postings.merge's


@dataclass
class Mismatch:
    """A term of one chunk that the postings and the table disagree on: ids the table gives it and
    the postings miss, ids the postings hold and the table no longer gives it."""

    term: str
    chunk: int
    missing: BitMap
    extra: BitMap

    def as_dict(self) -> dict[str, Any]:
        return {
            "term": self.term,
            "chunk": self.chunk,
            "missing": list(self.missing)[:SHOWN_IDS],
            "extra": list(self.extra)[:SHOWN_IDS],
            "missing_count": len(self.missing),
            "extra_count": len(self.extra),
        }


@dataclass
class CheckReport:
    sample: int | None
    checked_terms: int = 0
    checked_contacts: int = 0
    waiting_contacts: int = 0
    repaired: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)

    @property
    def mismatched_terms(self) -> int:
        return len({m.term for m in self.mismatches})

    def as_dict(self) -> dict[str, Any]:
        return {
            "sample": self.sample,
            "checked_terms": self.checked_terms,
            "checked_contacts": self.checked_contacts,
            "waiting_contacts": self.waiting_contacts,
            "mismatched_terms": self.mismatched_terms,
            "repaired": self.repaired,
            "mismatches": [m.as_dict() for m in self.mismatches],
        }


@asynccontextmanager
async def snapshot(database: Database) -> AsyncIterator[AsyncConnection]:
    """A read-only connection whose statements all see one moment of the database."""
    if database.is_sqlite:
        async with database.read_engine.connect() as connection:
            await connection.exec_driver_sql("BEGIN")
            try:
                yield connection
            finally:
                await connection.exec_driver_sql("ROLLBACK")
        return
    async with database.write_engine.connect() as plain:
        connection = await plain.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
        async with connection.begin() as transaction:
            yield connection
            await transaction.rollback()


_STORED_CHUNK = text("SELECT term, ids FROM search_postings WHERE chunk = :chunk")
_WAITING_IN = text("SELECT DISTINCT contact_id FROM search_changes WHERE contact_id >= :low AND contact_id < :high")
_HIGHEST = text("SELECT max(id) FROM contacts")


def _bounds(chunk: int) -> tuple[int, int]:
    low = chunk << postings.CHUNK_BITS
    return low, low + (1 << postings.CHUNK_BITS)


async def _built(connection: AsyncConnection | AsyncSession, chunk: int) -> tuple[dict[str, BitMap], int]:
    """The chunk's postings as the table gives them, and how many contacts it read."""
    low, high = _bounds(chunk)
    rows = list(await connection.execute(postings._CONTACTS_FROM, {"low": low, "high": high}))
    built: dict[str, BitMap] = {}
    for _, bitmaps in postings.build_chunks(rows):
        built.update(bitmaps)
    return built, len(rows)


async def _stored(connection: AsyncConnection | AsyncSession, chunk: int) -> dict[str, BitMap]:
    return {
        term: BitMap.deserialize(bytes(blob))
        for term, blob in await connection.execute(_STORED_CHUNK, {"chunk": chunk})
    }


async def _waiting(connection: AsyncConnection | AsyncSession, low: int, high: int) -> BitMap:
    return BitMap(int(row[0]) for row in await connection.execute(_WAITING_IN, {"low": low, "high": high}))


def _compare(term: str, chunk: int, built: BitMap, stored: BitMap, waiting: BitMap) -> Mismatch | None:
    expected, held = built - waiting, stored - waiting
    if expected == held:
        return None
    return Mismatch(term, chunk, missing=expected - held, extra=held - expected)


async def check_all(database: Database) -> CheckReport:
    """Every term of every chunk, against a build from the table."""
    report = CheckReport(sample=None)
    async with snapshot(database) as connection:
        highest = int((await connection.execute(_HIGHEST)).scalar() or 0)
        for chunk in range(postings.chunk_of(highest) + 1 if highest else 0):
            built, read = await _built(connection, chunk)
            stored = await _stored(connection, chunk)
            waiting = await _waiting(connection, *_bounds(chunk))
            report.checked_contacts += read
            report.waiting_contacts += len(waiting)
            for term in built.keys() | stored.keys():
                report.checked_terms += 1
                found = _compare(term, chunk, built.get(term, BitMap()), stored.get(term, BitMap()), waiting)
                if found is not None:
                    report.mismatches.append(found)
    return report


_ROWS_OF = {
    "sqlite": text(
        "SELECT id, business_name, specialty, license_type, industry, city, state, status, suppressed, "
        f"{postings.EMAIL_STATUS.format('')} AS email_status, phone_dnc FROM contacts "
        "WHERE id IN (SELECT value FROM json_each(:ids))"
    ),
    "postgresql": text(
        "SELECT id, business_name, specialty, license_type, industry, city, state, status, suppressed, "
        f"{postings.EMAIL_STATUS.format('')} AS email_status, phone_dnc FROM contacts "
        "WHERE id = ANY(CAST(CAST(:ids AS text) AS bigint[]))"
    ),
}
_TERMS_IN_CHUNK = {
    "sqlite": text(
        "SELECT term, ids FROM search_postings WHERE chunk = :chunk AND term IN (SELECT value FROM json_each(:terms))"
    ),
    "postgresql": text(
        "SELECT term, ids FROM search_postings WHERE chunk = :chunk "
        "AND term = ANY(CAST(CAST(:terms AS text) AS text[]))"
    ),
}
# Every filter term of a chunk but the cities (#ct:, thousands of them; a city is also an o: word).
_FACETS_IN_CHUNK = text(
    "SELECT term, ids FROM search_postings WHERE chunk = :chunk AND (term = '#a' "
    "OR (term >= '#em:' AND term < '#em;') OR (term >= '#in:' AND term < '#in;') "
    "OR (term >= '#st:' AND term < '#st;'))"
)
_ROW_AT = text("SELECT term, chunk, ids FROM search_postings WHERE term >= :start ORDER BY term, chunk LIMIT 1")


def _ids_param(dialect: str, values: list[int] | list[str]) -> str:
    return json.dumps(values) if dialect == "sqlite" else postings.pg_array(values)


async def check_sample(
    database: Database, *, contacts: int, rows: int = 100, rng: random.Random | None = None
) -> CheckReport:
    """``contacts`` random contacts and ``rows`` random posting rows (see the module's doc)."""
    rng = rng or random.Random()
    report = CheckReport(sample=contacts)
    dialect = database.dialect
    async with snapshot(database) as connection:
        highest = int((await connection.execute(_HIGHEST)).scalar() or 0)
        if not highest:
            return report
        chosen = sorted(rng.sample(range(1, highest + 1), min(contacts, highest)))
        by_chunk: dict[int, list[int]] = defaultdict(list)
        for contact_id in chosen:
            by_chunk[postings.chunk_of(contact_id)].append(contact_id)
        for chunk, ids in by_chunk.items():
            found = await connection.execute(_ROWS_OF[dialect], {"ids": _ids_param(dialect, ids)})
            expected = {int(row.id): postings.terms_of(row) for row in found}
            waiting = await _waiting(connection, *_bounds(chunk)) & BitMap(ids)
            report.checked_contacts += len(ids)
            report.waiting_contacts += len(waiting)
            wanted = sorted(set().union(*expected.values())) if expected else []
            stored = {
                term: BitMap.deserialize(bytes(blob))
                for term, blob in await connection.execute(
                    _TERMS_IN_CHUNK[dialect], {"chunk": chunk, "terms": _ids_param(dialect, wanted)}
                )
            }
            stored.update(
                {
                    term: BitMap.deserialize(bytes(blob))
                    for term, blob in await connection.execute(_FACETS_IN_CHUNK, {"chunk": chunk})
                }
            )
            sampled = BitMap(ids)
            for term in stored.keys() | set(wanted):
                report.checked_terms += 1
                built = BitMap(i for i, terms in expected.items() if term in terms)
                held = stored.get(term, BitMap()) & sampled
                mismatch = _compare(term, chunk, built, held, waiting)
                if mismatch is not None:
                    report.mismatches.append(mismatch)
        for _ in range(rows):
            await _probe_row(connection, dialect, rng, report)
    return report


async def _probe_row(connection: AsyncConnection, dialect: str, rng: random.Random, report: CheckReport) -> None:
    """A random posting row: up to PROBED_IDS of its ids must have its term, as the table says."""
    start = rng.choice(("n:", "s:", "l:", "o:", "#")) + "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=3))
    row = (await connection.execute(_ROW_AT, {"start": start})).one_or_none()
    if row is None:
        return
    term, chunk = row.term, int(row.chunk)
    held = BitMap.deserialize(bytes(row.ids))
    ids = sorted(rng.sample(list(held), min(PROBED_IDS, len(held))))
    found = await connection.execute(_ROWS_OF[dialect], {"ids": _ids_param(dialect, ids)})
    has = BitMap(int(r.id) for r in found if term in postings.terms_of(r))
    waiting = await _waiting(connection, *_bounds(chunk)) & BitMap(ids)
    report.checked_terms += 1
    mismatch = _compare(term, chunk, has, BitMap(ids), waiting)
    if mismatch is not None:
        report.mismatches.append(mismatch)


async def repair(database: Database, mismatches: list[Mismatch]) -> int:
    """Rewrites each (term, chunk) found wrong from the table, under the folds' lock; how many rows."""
    by_chunk: dict[int, set[str]] = defaultdict(set)
    for mismatch in mismatches:
        by_chunk[mismatch.chunk].add(mismatch.term)
    repaired = 0
    for chunk, terms in sorted(by_chunk.items()):
        async with database.writer_turn(), database.bulk_write_sessions() as session, session.begin():
            if not database.is_sqlite:
                await session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": FOLD_LOCK})
            built, _ = await _built(session, chunk)
            stored = await _stored(session, chunk)
            waiting = await _waiting(session, *_bounds(chunk))
            edits = postings.Edits()
            for term in sorted(terms):
                # The table's for contacts whose changes are folded in; the postings' own for the others
                # (a waiting change moves them from what the postings hold).
                wanted = (built.get(term, BitMap()) - waiting) | (stored.get(term, BitMap()) & waiting)
                now = stored.get(term, BitMap())
                if wanted != now:
                    edits.added[(term, chunk)] = wanted - now
                    edits.removed[(term, chunk)] = now - wanted
                    repaired += 1
            await postings.apply_edits(session, edits)
            await session.execute(postings._ADVANCE)
    return repaired


async def record(database: Database, report: CheckReport, *, now: datetime) -> None:
    """Keeps the report with the postings' generation (/metrics, `vpx status`)."""
    summary = {k: v for k, v in report.as_dict().items() if k != "mismatches"}
    summary["terms"] = sorted({m.term for m in report.mismatches})[:SHOWN_IDS]
    async with database.writer_turn(), database.write_sessions() as session, session.begin():
        await session.execute(update(SearchState).where(SearchState.id == 1).values(checked_at=now, last_check=summary))


async def last_check(session: AsyncSession | AsyncConnection) -> dict[str, Any] | None:
    """The last check's summary and when it ran; None before the first."""
    row = (await session.execute(text("SELECT checked_at, last_check FROM search_state WHERE id = 1"))).one_or_none()
    if row is None or row.checked_at is None:
        return None
    found = row.last_check if isinstance(row.last_check, dict) else json.loads(row.last_check or "{}")
    checked_at = driver_datetime(row.checked_at)
    assert checked_at is not None
    return {"checked_at": checked_at.isoformat(), **found}


_WAITING_COUNT = text("SELECT count(*) FROM search_changes")


async def figures(session: AsyncSession | AsyncConnection, now: datetime) -> metrics.SearchIndexFigures:
    """What /metrics shows of the index: the last check's wrong terms, the changes waiting, the check's age."""
    found = await last_check(session)
    waiting = int((await session.execute(_WAITING_COUNT)).scalar() or 0)
    if found is None:
        return metrics.SearchIndexFigures(mismatches=None, waiting_changes=waiting, check_age_seconds=None)
    checked_at = datetime.fromisoformat(found["checked_at"])
    return metrics.SearchIndexFigures(
        # What the last check found, repaired or not: any is a sign that something wrote around the index.
        mismatches=int(found.get("mismatched_terms", 0)),
        waiting_changes=waiting,
        check_age_seconds=max(0.0, (now - checked_at).total_seconds()),
    )


async def status(session: AsyncSession | AsyncConnection) -> dict[str, Any]:
    """The index's part of `vpx status --json`."""
    waiting = int((await session.execute(_WAITING_COUNT)).scalar() or 0)
    return {"waiting_changes": waiting, "last_check": await last_check(session)}
