"""The postings: for each term (vpx.contacts.search.terms), the ids of the active contacts that have
it, as Roaring bitmaps (pyroaring) in ``search_postings``, one row per term and chunk of 2**18
contact ids. A search reads the rows of its terms and works out the answer here, with set operations
whose cost follows the size of the bitmaps, never the number of contacts read from a table: a common
word's 200,000 matches are one bitmap of a few hundred kilobytes, counted exactly in microseconds.
Both databases keep the same rows and the same code answers on both.

How the postings follow the catalogue. Triggers on ``contacts`` (migration 20261128_search_postings)
write a row to ``search_changes`` for every insert, every change of a searched field or of the
status, and every delete, with the searched fields as they were. Writers therefore need do nothing,
whatever path they write by. Then:
- a search applies the pending changes to what it read (``View``): its answer is exact at once;
- the worker folds them into the postings (``merge``) and advances ``search_state.generation``,
  which tells each process that what it remembers of the postings is out of date.
Bulk loads set the trigger aside with the other indexes and build the postings of what they loaded
in one pass (``rebuild``).
"""

from __future__ import annotations

import asyncio
import json
from bisect import bisect_left, insort
from collections import defaultdict
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pyroaring import BitMap
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from vpx.contacts.search.terms import contact_terms, filter_terms, searched_word

if TYPE_CHECKING:
    from vpx.db import Database

CHUNK_BITS = 18
# Contact ids must fit the bitmaps' 32 bits.
MOST_ID = 2**32 - 1
# Pending changes a search applies itself. Writers keep the backlog below it (bulk loads and imports
# fold what they write, the worker folds the rest within a second); a search that finds more says
# its answer is not exact and has its process fold them (vpx.contacts.search.engine).
PENDING_APPLIED = 5_000
# Changes folded into the postings per transaction.
MERGE_BATCH = 20_000

Reader = AsyncSession | AsyncConnection
CONTACT_FIELDS = ("business_name", "specialty", "license_type", "industry", "city", "state")
# A contact's email status as search sees it: none without an email (a contact's status is
# "unknown" from the start, email or not).
EMAIL_STATUS = "CASE WHEN {0}email IS NULL THEN NULL ELSE {0}email_status END"


def chunk_of(contact_id: int) -> int:
    return contact_id >> CHUNK_BITS


def terms_of(row: Any) -> frozenset[str]:
    """The terms of a contacts row (anything with the searched fields as attributes), none unless
    it is active and not suppressed (a row of NULLs: a contact that is gone)."""
    if row is None or row.status != "active" or getattr(row, "suppressed", False):
        return frozenset()
    return contact_terms(
        business_name=row.business_name or "",
        specialty=row.specialty,
        license_type=row.license_type,
        industry=row.industry or "",
        city=row.city or "",
        state=row.state or "",
        # getattr: migration 20261128_search_postings built the postings before these columns existed.
        email_status=getattr(row, "email_status", None),
        phone_dnc=getattr(row, "phone_dnc", None),
    )


# --- reading -----------------------------------------------------------------------------------


def pg_array(values: Iterable[object]) -> str:
    """A PostgreSQL array literal of ``values``, sent as one text parameter and cast on the server
    (``CAST(CAST(:p AS text) AS text[])``): an array-typed parameter costs asyncpg a type look-up of
    20-40 ms on each new connection, which every server process's first searches paid."""
    quoted = ('"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"' for value in values)
    return "{" + ",".join(quoted) + "}"


# Each read of the postings says which generation it read (in the same statement: one snapshot), so
# that bitmaps are never put together with a view of another generation.
_EXACT = {
    "sqlite": text(
        "SELECT s.generation, p.term, p.ids FROM search_state s LEFT JOIN search_postings p "
        "ON p.term IN (SELECT value FROM json_each(:terms)) WHERE s.id = 1"
    ),
    "postgresql": text(
        "SELECT s.generation, p.term, p.ids FROM search_state s LEFT JOIN search_postings p "
        "ON p.term = ANY(CAST(CAST(:terms AS text) AS text[])) WHERE s.id = 1"
    ),
}
_PREFIXED = text(
    "SELECT s.generation, p.term, p.ids FROM search_state s LEFT JOIN search_postings p "
    "ON p.term >= :low AND p.term < :high WHERE s.id = 1"
)
# The highest code point: above any character a term can hold, in both databases' byte order.
_ABOVE = "\U0010ffff"


_EXACT_PART = {
    "sqlite": "SELECT -1 AS k, term, ids FROM search_postings WHERE term IN (SELECT value FROM json_each(:terms))",
    "postgresql": (
        "SELECT -1 AS k, term, ids FROM search_postings WHERE term = ANY(CAST(CAST(:terms AS text) AS text[]))"
    ),
}
_PREFIX_PART = "SELECT {0} AS k, term, ids FROM search_postings WHERE term >= :low{0} AND term < :high{0}"
_statements: dict[tuple[str, bool, int], Any] = {}


def _postings_statement(dialect: str, exact: bool, prefixes: int) -> Any:
    """One statement reading exact terms and the terms of several prefixes, each row tagged with
    what it was read for (-1: exact, else the prefix's place), with the generation: one snapshot."""
    key = (dialect, exact, prefixes)
    statement = _statements.get(key)
    if statement is None:
        parts = ([_EXACT_PART[dialect]] if exact else []) + [_PREFIX_PART.format(i) for i in range(prefixes)]
        statement = _statements[key] = text(
            "SELECT s.generation, p.k, p.term, p.ids FROM search_state s LEFT JOIN ("
            + " UNION ALL ".join(parts)
            + ") AS p ON 1 = 1 WHERE s.id = 1"
        )
    return statement


@dataclass(frozen=True)
class Postings:
    """Exact terms' bitmaps and prefixes' (every term starting with one, together), of one generation."""

    generation: int
    exact: dict[str, BitMap]
    prefixed: dict[str, BitMap]


async def read_postings(reader: Reader, exact: Sequence[str], prefixes: Sequence[str]) -> Postings:
    """What a question needs of the postings, in one statement (a term no active contact has, or a
    prefix none starts, is left out)."""
    if not exact and not prefixes:
        return Postings(-1, {}, {})
    dialect = _dialect(reader)
    parameters: dict[str, str] = {}
    if exact:
        parameters["terms"] = json.dumps(list(exact)) if dialect == "sqlite" else pg_array(exact)
    for i, prefix in enumerate(prefixes):
        parameters[f"low{i}"], parameters[f"high{i}"] = prefix, prefix + _ABOVE
    rows = await reader.execute(_postings_statement(dialect, bool(exact), len(prefixes)), parameters)
    generation = 0
    found: dict[str, BitMap] = {}
    chunks: dict[int, list[BitMap]] = defaultdict(list)
    for row in rows:
        generation = int(row.generation or 0)
        if row.term is None:
            continue
        if row.k < 0:
            _join(found, row.term, row.ids)
        else:
            chunks[int(row.k)].append(BitMap.deserialize(bytes(row.ids)))
    prefixed = {prefixes[k]: parts[0] if len(parts) == 1 else BitMap.union(*parts) for k, parts in chunks.items()}
    return Postings(generation, found, prefixed)


def _dialect(reader: Reader) -> str:
    return str(reader.get_bind().dialect.name if isinstance(reader, AsyncSession) else reader.dialect.name)


@dataclass(frozen=True)
class Read:
    """Bitmaps read from the postings, and the generation they are of."""

    generation: int
    bitmaps: dict[str, BitMap]


async def read_terms(reader: Reader, terms: Sequence[str]) -> Read:
    """Each term's bitmap (its chunks joined); a term no active contact has is left out."""
    if not terms:
        return Read(-1, {})
    dialect = _dialect(reader)
    value = json.dumps(list(terms)) if dialect == "sqlite" else pg_array(terms)
    return _joined(await reader.execute(_EXACT[dialect], {"terms": value}))


async def read_prefixed(reader: Reader, prefix: str) -> Read:
    """The bitmaps of every term that starts with ``prefix``."""
    return _joined(await reader.execute(_PREFIXED, {"low": prefix, "high": prefix + _ABOVE}))


def _joined(rows: Iterable[Any]) -> Read:
    generation, found = 0, dict[str, BitMap]()
    for row in rows:
        generation = int(row.generation or 0)
        if row.term is not None:
            _join(found, row.term, row.ids)
    return Read(generation, found)


def _join(found: dict[str, BitMap], term: str, blob: bytes) -> None:
    bitmap = BitMap.deserialize(bytes(blob))
    if term in found:
        found[term] |= bitmap
    else:
        found[term] = bitmap


# --- what a search sees: the generation and the pending changes -------------------------------


@dataclass(frozen=True)
class View:
    """The postings' generation and the changes not folded into them yet, each contact with the
    terms it has now (none when it is inactive or gone). ``complete``: every pending change is here
    (else only the contacts of the first PENDING_APPLIED)."""

    generation: int
    pending: dict[int, frozenset[str]] = field(default_factory=dict)
    complete: bool = True
    # Whether bitmaps read for it must be of its generation (vpx.contacts.search.engine).
    strict: bool = True
    # Each pending contact's columns as read: what the next view can take its terms from.
    states: dict[int, tuple[Any, ...]] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def stamp(self) -> tuple[int, int]:
        return self.generation, hash(tuple(sorted(self.pending.items())))

    @cached_property
    def changed(self) -> BitMap:
        return BitMap(self.pending)

    @cached_property
    def by_term(self) -> dict[str, BitMap]:
        """Each term the pending contacts have now, with those that have it."""
        found: dict[str, list[int]] = defaultdict(list)
        for contact_id, terms in self.pending.items():
            for term in terms:
                found[term].append(contact_id)
        return {term: BitMap(ids) for term, ids in found.items()}

    @cached_property
    def sorted_terms(self) -> list[str]:
        return sorted(self.by_term)

    def having_prefix(self, prefix: str) -> BitMap:
        """The pending contacts that now have a term starting with ``prefix``."""
        start = bisect_left(self.sorted_terms, prefix)
        end = bisect_left(self.sorted_terms, prefix + _ABOVE, lo=start)
        found = [self.by_term[term] for term in self.sorted_terms[start:end]]
        return BitMap.union(*found) if found else BitMap()

    @cached_property
    def words(self) -> frozenset[str]:
        """The searched words of the pending contacts' terms: the vocabulary will have them once they
        are folded in, so typo corrections count them already."""
        return frozenset(
            word for terms in self.pending.values() for term in terms if (word := searched_word(term)) is not None
        )


_VIEW = text(
    "SELECT (SELECT generation FROM search_state WHERE id = 1) AS generation, c.seq, c.contact_id, "
    "k.business_name, k.specialty, k.license_type, k.industry, k.city, k.state, k.status, k.suppressed, "
    f"{EMAIL_STATUS.format('k.')} AS email_status, k.phone_dnc "
    "FROM (SELECT 1 AS one) AS o LEFT JOIN search_changes c ON 1 = 1 LEFT JOIN contacts k ON k.id = c.contact_id "
    "ORDER BY c.seq LIMIT :limit"
)


_last_view: tuple[tuple[Any, ...], View] | None = None


async def read_view(reader: Reader) -> View:
    """The generation and the first ``PENDING_APPLIED`` pending changes, read in one statement (one
    snapshot: a merge that commits meanwhile is seen whole or not at all). Rows as read last time
    give the same view back, with what was worked out of it (a backlog waiting costs its terms once,
    not at every search)."""
    global _last_view
    rows = list(await reader.execute(_VIEW, {"limit": PENDING_APPLIED + 1}))
    if not rows:
        return View(generation=0)
    key = tuple(tuple(row) for row in rows)
    if _last_view is not None and _last_view[0] == key:
        return _last_view[1]
    view = _view_of(rows, _last_view[1] if _last_view is not None else None)
    _last_view = (key, view)
    return view


def _view_of(rows: list[Any], earlier: View | None = None) -> View:
    """The view of these rows; what it shares with ``earlier`` (under a steady write load most of the
    contacts waiting are the same from one search to the next) is taken from it, not worked out
    again: each contact's terms, and the ids by term (copied on write: a view never changes once
    made, whatever another search does with the next one)."""
    pending: dict[int, frozenset[str]] = {}
    states: dict[int, tuple[Any, ...]] = {}
    known = earlier.states if earlier is not None else {}
    for row in rows[:PENDING_APPLIED]:
        if row.contact_id is None:
            continue
        contact_id = int(row.contact_id)
        state = tuple(row)[3:]  # the contact as it is now (the columns after generation, seq and id)
        states[contact_id] = state
        if known.get(contact_id) == state and earlier is not None:
            pending[contact_id] = earlier.pending[contact_id]
        else:
            pending[contact_id] = terms_of(row)
    complete = len(rows) <= PENDING_APPLIED or rows[PENDING_APPLIED].contact_id is None
    view = View(generation=int(rows[0].generation or 0), pending=pending, complete=complete, states=states)
    if earlier is not None and "by_term" in earlier.__dict__:
        _carry_index(view, earlier)
    return view


def _carry_index(view: View, earlier: View) -> None:
    """The view's ids by term and its sorted terms, from the earlier view's and the contacts that
    differ between the two."""
    by_term = dict(earlier.by_term)
    gone: set[str] = set()
    born: set[str] = set()
    for contact_id in earlier.pending.keys() | view.pending.keys():
        before = earlier.pending.get(contact_id, frozenset())
        after = view.pending.get(contact_id, frozenset())
        if contact_id in earlier.pending and contact_id in view.pending and before is after:
            continue
        for term in before - after:
            remaining = by_term[term] - BitMap([contact_id])
            if remaining:
                by_term[term] = remaining
            else:
                del by_term[term]
                gone.add(term)
        for term in after - before:
            if term in by_term:
                by_term[term] = by_term[term] | BitMap([contact_id])
            else:
                by_term[term] = BitMap([contact_id])
                born.add(term)
    view.__dict__["by_term"] = by_term
    if "sorted_terms" in earlier.__dict__:
        # A term may leave and come back (its last holder left it, a later contact took it): what
        # counts is whether it is held at the end, and whether the earlier list had it.
        gone = {term for term in gone if term not in by_term}
        earlier_terms = earlier.sorted_terms
        terms = [term for term in earlier_terms if term not in gone] if gone else list(earlier_terms)
        for term in sorted(born):
            if term in by_term and not _in_sorted(earlier_terms, term):
                insort(terms, term)
        view.__dict__["sorted_terms"] = terms


def _in_sorted(terms: list[str], term: str) -> bool:
    at = bisect_left(terms, term)
    return at < len(terms) and terms[at] == term


# --- writing ---------------------------------------------------------------------------------


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


async def fold_changes(database: Database) -> int:
    """One merge of pending changes into the postings, with the words they bring added to the
    vocabulary of typo corrections; how many changes it folded (the worker's search round)."""
    from vpx.contacts.search.engine import backend_for

    # A connection whose statements leave the event loop free (SQLite: a thread of its own): a
    # server process folds too (its worker, or a search that found a backlog).
    async with database.writer_turn(), database.bulk_write_sessions() as session, session.begin():
        merged, words = await merge(session)
        vocabulary = {word for word in words if len(word) >= 2}
        if vocabulary:
            await backend_for(database.dialect).add_terms(session, vocabulary)
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
