"""Reading the postings: the terms of a contact, and the bitmaps of terms and prefixes (one statement,
one snapshot, with the generation they are of)."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyroaring import BitMap
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from vpx.contacts.search.terms import contact_terms

if TYPE_CHECKING:
    pass

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
    found = await read_postings(reader, terms, ())
    return Read(found.generation, found.exact)


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
