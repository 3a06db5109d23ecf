"""Writing the postings: folding the change log into them (``merge``, ``fold_changes``), building them
from the contacts table (``rebuild``), and the vocabulary of words the folds add."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyroaring import BitMap
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.search.postings.reading import (
    CHUNK_BITS,
    EMAIL_STATUS,
    MERGE_BATCH,
    MOST_ID,
    _dialect,
    chunk_of,
    pg_array,
    terms_of,
)
from vpx.contacts.search.terms import filter_terms, searched_word

if TYPE_CHECKING:
    from vpx.db import Database


@dataclass
class Edits:
    """Ids to add to and remove from terms, by (term, chunk)."""

    added: dict[tuple[str, int], BitMap] = field(default_factory=lambda: defaultdict(BitMap))
    removed: dict[tuple[str, int], BitMap] = field(default_factory=lambda: defaultdict(BitMap))

    def move(self, contact_id: int, before: frozenset[str], after: frozenset[str]) -> None:
        chunk = chunk_of(contact_id)
        for term in before - after:
            self.removed[(term, chunk)].add(contact_id)
        for term in after - before:
            self.added[(term, chunk)].add(contact_id)

    def keys(self) -> set[tuple[str, int]]:
        return set(self.added) | set(self.removed)


_ROWS_FOR_UPDATE = {
    "sqlite": text(
        "SELECT term, chunk, ids FROM search_postings WHERE (term, chunk) IN "
        "(SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(:keys))"
    ),
    "postgresql": text(
        "SELECT p.term, p.chunk, p.ids FROM search_postings p "
        "JOIN unnest(CAST(CAST(:terms AS text) AS text[]), CAST(CAST(:chunks AS text) AS integer[])) "
        "AS k(term, chunk) "
        "ON p.term = k.term AND p.chunk = k.chunk ORDER BY p.term, p.chunk FOR UPDATE OF p"
    ),
}
_UPSERT = text(
    "INSERT INTO search_postings (term, chunk, ids, size) VALUES (:term, :chunk, :ids, :size) "
    "ON CONFLICT (term, chunk) DO UPDATE SET ids = excluded.ids, size = excluded.size"
)
_DELETE_ROW = text("DELETE FROM search_postings WHERE term = :term AND chunk = :chunk")


async def apply_edits(session: AsyncSession, edits: Edits) -> None:
    """Writes ``edits`` into the postings, in the session's transaction (rows locked on PostgreSQL,
    in term order, so two writers never deadlock)."""
    keys = sorted(edits.keys())
    if not keys:
        return
    dialect = _dialect(session)
    current: dict[tuple[str, int], bytes] = {}
    for start in range(0, len(keys), 5_000):
        part = keys[start : start + 5_000]
        if dialect == "sqlite":
            parameters: dict[str, Any] = {"keys": json.dumps(part)}
        else:
            parameters = {"terms": pg_array(k[0] for k in part), "chunks": pg_array(k[1] for k in part)}
        for term, chunk, blob in await session.execute(_ROWS_FOR_UPDATE[dialect], parameters):
            current[(term, int(chunk))] = bytes(blob)
    # The bitmaps' work off the event loop (a server process may fold: vpx.contacts.search.folding).
    upserts, deletes = await asyncio.to_thread(_edited, keys, current, edits)
    if upserts:
        await session.execute(_UPSERT, upserts)
    if deletes:
        await session.execute(_DELETE_ROW, deletes)


def _edited(
    keys: list[tuple[str, int]], current: dict[tuple[str, int], bytes], edits: Edits
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows to write (upserts) and to delete, the edits made to the bitmaps read."""
    upserts, deletes = [], []
    for key in keys:
        blob = current.get(key)
        bitmap = BitMap.deserialize(blob) if blob is not None else BitMap()
        if key in edits.removed:
            bitmap -= edits.removed[key]
        if key in edits.added:
            bitmap |= edits.added[key]
        if bitmap:
            upserts.append({"term": key[0], "chunk": key[1], "ids": _serialised(bitmap), "size": len(bitmap)})
        elif blob is not None:
            deletes.append({"term": key[0], "chunk": key[1]})
    return upserts, deletes


def _serialised(bitmap: BitMap) -> bytes:
    bitmap.run_optimize()
    bitmap.shrink_to_fit()
    return bytes(bitmap.serialize())


# Every change visible now of the contacts of the first ``limit`` changes, with each contact as it is
# now, in one statement (one snapshot). All of a contact's changes, not only those among the first:
# the contact is read as it is now, after all of them, so a change of it left pending would later
# be folded from a "before" the postings no longer hold (and a term it lost would stay).
_PENDING = text(
    "SELECT c.seq, c.contact_id, c.was_active, c.business_name AS old_business_name, "
    "c.specialty AS old_specialty, c.license_type AS old_license_type, c.industry AS old_industry, "
    "c.city AS old_city, c.state AS old_state, c.email_status AS old_email_status, c.phone_dnc AS old_phone_dnc, "
    "k.business_name, k.specialty, k.license_type, k.industry, k.city, k.state, k.status, k.suppressed, "
    f"{EMAIL_STATUS.format('k.')} AS email_status, k.phone_dnc "
    "FROM search_changes c LEFT JOIN contacts k ON k.id = c.contact_id "
    "WHERE c.contact_id IN (SELECT f.contact_id FROM search_changes f ORDER BY f.seq LIMIT :limit) "
    "ORDER BY c.seq"
)
# The folded changes by their numbers, joined (on PostgreSQL `seq = ANY(array)` with a parameter
# cannot hash the array: a generic plan compared every row with every number, minutes a batch).
_DONE = {
    "sqlite": text("DELETE FROM search_changes WHERE seq IN (SELECT value FROM json_each(:seqs))"),
    "postgresql": text(
        "DELETE FROM search_changes c USING unnest(CAST(CAST(:seqs AS text) AS bigint[])) AS d(seq) WHERE c.seq = d.seq"
    ),
}
_ADVANCE = text(
    "INSERT INTO search_state (id, generation) VALUES (1, 1) "
    "ON CONFLICT (id) DO UPDATE SET generation = search_state.generation + 1"
)


@dataclass(frozen=True)
class _Was:
    """A contact's searched fields as a change row kept them (before the change)."""

    business_name: str | None
    specialty: str | None
    license_type: str | None
    industry: str | None
    city: str | None
    state: str | None
    status: str
    email_status: str | None
    phone_dnc: str | None


def _only_email_moved(first: Any, now: Any) -> bool:
    """Whether the postings' contact (before ``first``, a change row) and the contact ``now`` differ
    at most in their email status and phone's Do-Not-Call state: both active and every searched
    field the same."""
    return (
        bool(first.was_active)
        and now.status == "active"
        and not now.suppressed
        and first.old_business_name == now.business_name
        and first.old_specialty == now.specialty
        and first.old_license_type == now.license_type
        and first.old_industry == now.industry
        and first.old_city == now.city
        and first.old_state == now.state
    )


def _edits_of(rows: list[Any]) -> tuple[Edits, set[str]]:
    """What the changes do to the postings: each contact moved from the terms the postings hold for
    it (before its first change) to the terms it has now; and the words of the terms gained."""
    first_seen: dict[int, Any] = {}
    current: dict[int, Any] = {}
    for row in rows:
        first_seen.setdefault(int(row.contact_id), row)
        current[int(row.contact_id)] = row
    edits, words = Edits(), set[str]()
    for contact_id, first in first_seen.items():
        now = current[contact_id]
        if _only_email_moved(first, now):
            # The commonest change (an email check): one filter term for another, nothing to cut up.
            before = filter_terms(first.old_email_status, first.old_phone_dnc)
            edits.move(contact_id, before, filter_terms(now.email_status, now.phone_dnc))
            continue
        # What the postings hold: the fields before the contact's first pending change.
        was = _Was(
            first.old_business_name,
            first.old_specialty,
            first.old_license_type,
            first.old_industry,
            first.old_city,
            first.old_state,
            "active" if first.was_active else "inactive",
            first.old_email_status,
            first.old_phone_dnc,
        )
        before, after = terms_of(was), terms_of(now)
        edits.move(contact_id, before, after)
        # Words the vocabulary may not have yet: those of the terms the contact gained.
        words.update(word for term in after - before if (word := searched_word(term)) is not None)
    return edits, words


async def merge(session: AsyncSession, *, limit: int = MERGE_BATCH) -> tuple[int, set[str]]:
    """Folds up to ``limit`` pending changes into the postings, in the session's transaction, and
    advances the generation. Returns how many changes it folded and the words of the terms it
    added (for the vocabulary of typo corrections)."""
    if _dialect(session) == "postgresql":
        # One merge at a time: a second waits here, then finds the changes gone.
        await session.execute(text("SELECT pg_advisory_xact_lock(7372461)"))
    rows = list(await session.execute(_PENDING, {"limit": limit}))
    if not rows:
        return 0, set()
    edits, words = await asyncio.to_thread(_edits_of, rows)
    await apply_edits(session, edits)
    seqs = [int(row.seq) for row in rows]
    dialect = _dialect(session)
    await session.execute(_DONE[dialect], {"seqs": json.dumps(seqs) if dialect == "sqlite" else pg_array(seqs)})
    await session.execute(_ADVANCE)
    return len(rows), words


# --- building from the contacts table -----------------------------------------------------------


def build_chunks(rows: Iterable[Any]) -> Iterator[tuple[int, dict[str, BitMap]]]:
    """The postings of contact rows given in id order, chunk by chunk: (chunk, term -> bitmap)."""
    chunk: int | None = None
    ids: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        contact_id = int(row.id)
        if contact_id > MOST_ID:
            raise ValueError(f"contact id {contact_id} does not fit the search postings")
        if chunk_of(contact_id) != chunk:
            if chunk is not None and ids:
                yield chunk, {term: BitMap(values) for term, values in ids.items()}
            chunk, ids = chunk_of(contact_id), defaultdict(list)
        for term in terms_of(row):
            ids[term].append(contact_id)
    if chunk is not None and ids:
        yield chunk, {term: BitMap(values) for term, values in ids.items()}


def posting_rows(chunk: int, bitmaps: dict[str, BitMap]) -> list[dict[str, Any]]:
    return [
        {"term": term, "chunk": chunk, "ids": _serialised(bitmap), "size": len(bitmap)}
        for term, bitmap in bitmaps.items()
    ]


_CONTACTS_FROM = text(
    "SELECT id, business_name, specialty, license_type, industry, city, state, status, suppressed, "
    f"{EMAIL_STATUS.format('')} AS email_status, phone_dnc FROM contacts WHERE id >= :low AND id < :high ORDER BY id"
)


async def _contact_rows(session: AsyncSession, low: int, high: int) -> AsyncIterator[list[Any]]:
    step = 1 << CHUNK_BITS
    for start in range(low, high, step):
        yield list(await session.execute(_CONTACTS_FROM, {"low": start, "high": min(high, start + step)}))


async def rebuild(session: AsyncSession, *, from_id: int = 0) -> int:
    """Builds the postings of every contact from ``from_id`` on (whole chunks: ``from_id`` is rounded
    down to its chunk's first id), replacing what they held, in the session's transaction; pending
    changes of those contacts are dropped (the build reads the contacts as they are). Returns how
    many contacts it read."""
    low = chunk_of(from_id) << CHUNK_BITS
    highest = (await session.execute(text("SELECT max(id) FROM contacts"))).scalar()
    await session.execute(text("DELETE FROM search_postings WHERE chunk >= :chunk"), {"chunk": chunk_of(low)})
    await session.execute(text("DELETE FROM search_changes WHERE contact_id >= :low"), {"low": low})
    read = 0
    if highest is not None:
        async for rows in _contact_rows(session, low, int(highest) + 1):
            read += len(rows)
            for chunk, bitmaps in build_chunks(rows):
                values = posting_rows(chunk, bitmaps)
                for start in range(0, len(values), 10_000):
                    await session.execute(_UPSERT, values[start : start + 10_000])
    await session.execute(_ADVANCE)
    if _dialect(session) == "postgresql":
        # Statistics of what was just built: without them (autovacuum off, or not yet come) PostgreSQL
        # planned a many-term read of a fresh catalogue as a sequential scan, 1.4 s instead of 0.5 ms.
        await session.execute(text("ANALYZE search_postings"))
    return read


_ADD_WORD = text("INSERT INTO search_terms (term) VALUES (:term) ON CONFLICT DO NOTHING")


async def add_words(session: AsyncSession, words: set[str]) -> None:
    """Adds words to the vocabulary of typo corrections (``search_terms``), those it has left alone."""
    if words:
        await session.execute(_ADD_WORD, [{"term": word} for word in sorted(words)])


async def fold_changes(database: Database) -> int:
    """One merge of pending changes into the postings, with the words they bring added to the
    vocabulary of typo corrections; how many changes it folded (the worker's search round)."""
    # A connection whose statements leave the event loop free (SQLite: a thread of its own): a
    # server process folds too (its worker, or a search that found a backlog).
    async with database.writer_turn(), database.bulk_write_sessions() as session, session.begin():
        merged, words = await merge(session)
        vocabulary = {word for word in words if len(word) >= 2}
        if vocabulary:
            await add_words(session, vocabulary)
    if merged and not database.is_sqlite:
        await _vacuum_now_and_then(database, merged)
    return merged


# PostgreSQL: the change log is a queue (rows in at one end, folded rows deleted at the other) whose
# dead rows every search's and fold's read of its head walks through until a vacuum clears them.
# Autovacuum may be slow to come, or off: the folding process vacuums it after this many deletions.
VACUUM_AFTER = 20_000
_deleted_since_vacuum = 0


async def _vacuum_now_and_then(database: Database, deleted: int) -> None:
    global _deleted_since_vacuum
    _deleted_since_vacuum += deleted
    if _deleted_since_vacuum < VACUUM_AFTER:
        return
    _deleted_since_vacuum = 0
    async with database.autocommit_engine.connect() as connection:
        await connection.exec_driver_sql("VACUUM (ANALYZE) search_changes")


_WAITING = text("SELECT count(*) FROM (SELECT 1 FROM search_changes LIMIT :enough) AS w")


async def fold_backlog(database: Database, *, above: int = 0) -> int:
    """Folds every change waiting when more than ``above`` wait (writers that write many contacts
    call it: searches then never meet a backlog past what they apply); how many it folded."""
    if above:
        async with database.read_sessions() as session:
            waiting = int(await session.scalar(_WAITING, {"enough": above + 1}) or 0)
        if waiting <= above:
            return 0
    folded = 0
    while merged := await fold_changes(database):
        folded += merged
    return folded
