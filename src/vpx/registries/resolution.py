"""Entity resolution, the search part: candidates for a batch of new records, then a decision each.

Candidates come from indexed blocks only, never from a scan: contacts with the same phone, and
contacts in the same state and city whose name starts with the same word (``ix_contacts_block``, an
expression index on state, city and that word). Records earlier in the same batch are candidates too, so
a business listed twice in one file becomes one contact. rapidfuzz only runs within a block.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.identifiers import parsed, registrable_domain
from vpx.contacts.normalise import block_token, street_key
from vpx.registries.bulk import SQLITE_CHUNK, sqlite_chunks
from vpx.registries.matching import MatchKeys, house_number, match_name, resolve_among


@dataclass(frozen=True, slots=True)
class HeldApart:
    contact_id: int | None  # an existing contact …
    pending: int | None  # … or a record earlier in the batch that makes a contact of its own
    reason: str
    score: float


@dataclass(frozen=True, slots=True)
class Target:
    """Where a new record goes: an existing contact, a contact created earlier in the batch
    (``pending``, its index), or a new contact of its own (both None). ``held_apart``: the contacts
    (existing id, or pending index) a veto kept it from although their names are nearly equal, with
    the veto and the name score: possible duplicates (vpx.registries.duplicates)."""

    contact_id: int | None = None
    pending: int | None = None
    rule: str | None = None
    held_apart: tuple[HeldApart, ...] = ()


def keys_of(row: dict[str, Any]) -> MatchKeys:
    return MatchKeys(
        name_key=match_name(row["name_key"]),
        state=row["state"],
        city_key=row["city_key"],
        street_key=street_key(row.get("street")),
        phone=row.get("phone"),
        block=block_token(row["name_key"]),
        website=registrable_domain(row.get("website")),
        identifiers=parsed(row.get("identifiers")),
    )


def _block(keys: MatchKeys) -> tuple[str, str, str]:
    return keys.state, keys.city_key, keys.block


def block_expression(*, sqlite: bool, table: str = "") -> str:
    """SQL for block_token(name_key); the same expression as the ix_contacts_block index."""
    column = f"{table}name_key"
    rest = f"(CASE WHEN substr({column}, 1, 4) = 'the ' THEN substr({column}, 5) ELSE {column} END)"
    if sqlite:
        return f"substr({rest}, 1, instr({rest} || ' ', ' ') - 1)"
    return f"split_part({rest}, ' ', 1)"


COLUMNS = "c.id, c.name_key, c.state, c.city_key, c.street, c.phone, c.status, c.website, c.identifiers"
PHONE_AMONG = "c.phone = ANY(CAST(:phones AS text[]))"
# What a street key's first word may be made of, and what folding drops before it in ASCII ("#" is
# not among them: it reads as "ste", so "#12 Main" has no house number).
_ALNUM = "0123456789abcdefghijklmnopqrstuvwxyz"
_BEFORE = " !\"$%&''()*+,-./:;<=>?@[\\]^_`{|}~"
WHOLE_STREET = ""  # house_expression's value for a street that may be anywhere in its block
NO_HOUSE = "-"  # … and for one whose key does not start with a house number


def house_expression(*, sqlite: bool, table: str = "") -> str:
    """SQL for a contact's house number as matching.house_number(street_key(street)) finds it, for a
    street in printable ASCII (its key's words are then its own runs of letters and digits, lower
    cased); NO_HOUSE when the key does not start with one; WHOLE_STREET when the street has no key
    or when folding may change it (accents, other scripts' or fullwidth digits, control
    characters): such a contact is a candidate for every record of its block. The second part of
    ``ix_contacts_block``'s key (migration 20261124_block_house); a test holds it to the Python on
    generated streets, on both databases."""
    street = f"{table}street"
    rest = f"ltrim(lower({street}), '{_BEFORE}')"
    number = f"substr({rest}, 1, length({rest}) - length(ltrim({rest}, '{_ALNUM}')))"
    if sqlite:
        unknown = f"{street} IS NULL OR {street} GLOB '*[^ -~]*' OR {street} NOT GLOB '*[A-Za-z0-9]*'"
        digit = f"instr('0123456789', substr({rest}, 1, 1)) > 0"
    else:
        unknown = f"{street} IS NULL OR {street} ~ '[^ -~]' OR {street} !~ '[A-Za-z0-9]'"
        digit = f"strpos('0123456789', substr({rest}, 1, 1)) > 0"
    return f"(CASE WHEN {unknown} THEN '{WHOLE_STREET}' WHEN {digit} THEN {number} ELSE '{NO_HOUSE}' END)"


def _lookup(keys: MatchKeys) -> tuple[str, str, str, str | None]:
    """A record's block, and the house number its candidates are narrowed to (None: the whole block,
    for a record without a street, or whose street does not start with a number in ASCII digits)."""
    number = house_number(keys.street_key) if keys.street_key else ""
    return keys.state, keys.city_key, keys.block, number if number and number.isascii() else None


@lru_cache(maxsize=1 << 16)
def stored_keys(
    name_key: str,
    state: str,
    city_key: str,
    street: str | None,
    phone: str | None,
    website: str | None = None,
    identifiers: str | None = None,
) -> MatchKeys:
    """A stored contact's matching keys, from its columns."""
    # A large block (a common first word in a large city) is fetched again for batch after batch;
    # its contacts' keys are computed once (5.6 s of a 1,000,000-row import before this cache).
    return MatchKeys(
        match_name(name_key),
        state,
        city_key,
        street_key(street),
        phone,
        block_token(name_key),
        registrable_domain(website),
        parsed(identifiers),
    )


async def candidates(session: AsyncSession, keys: list[MatchKeys]) -> dict[int, MatchKeys]:
    """Active contacts that the rules may find the same as one of these records, with their keys:
    every contact with a record's phone, and every contact in a record's block at an address
    compatible with the record's (and possibly a few more)."""
    phones = sorted({k.phone for k in keys if k.phone})
    # A block is looked up whole, once, when one of its records has no house number; otherwise at
    # each of its records' house numbers, and at WHOLE_STREET for the contacts that may be at any
    # (matching.addresses_compatible admits no other contact: an incompatible address is never
    # fetched, however large the block, and the index finds exactly these).
    lookups = {_lookup(k) for k in keys if k.block}
    whole = {lookup[:3] for lookup in lookups if lookup[3] is None}
    housed = sorted(
        {(*lookup[:3], house) for lookup in lookups if lookup[3] is not None and lookup[:3] not in whole
         for house in (lookup[3], WHOLE_STREET)}
    )  # fmt: skip
    if session.get_bind().dialect.name == "postgresql":
        results = await _postgres_rows(session, phones, sorted(whole), housed)
    else:
        results = await _sqlite_rows(session, phones, sorted(whole), housed)
    found: dict[int, MatchKeys] = {}
    for rows in results:
        for row in rows:
            if row[6] == "active":
                found[row[0]] = stored_keys(row[1], row[2], row[3], row[4], row[5], row[7], row[8])
    return found


async def _postgres_rows(
    session: AsyncSession, phones: list[str], whole: list[tuple[str, str, str]], housed: list[tuple[str, str, str, str]]
) -> list[Any]:
    """The lookups' results (rows of COLUMNS) on PostgreSQL: arrays, not IN lists, so one parameter
    each whatever the batch size."""
    same_block = (
        f"c.state = b.state AND c.city_key = b.city_key AND {block_expression(sqlite=False, table='c.')} = b.token"
    )
    by_phone = await session.execute(
        text(f"SELECT {COLUMNS} FROM contacts c WHERE {PHONE_AMONG} AND c.status = 'active'"),
        {"phones": phones},
    )
    by_block = await session.execute(
        text(
            f"SELECT {COLUMNS} FROM unnest(CAST(:states AS text[]), CAST(:cities AS text[]), "
            "CAST(:tokens AS text[]), CAST(:houses AS text[])) AS b(state, city_key, token, house) "
            f"JOIN contacts c ON {same_block} AND {house_expression(sqlite=False, table='c.')} = b.house "
            "WHERE c.status = 'active' UNION ALL "
            f"SELECT {COLUMNS} FROM unnest(CAST(:whole_states AS text[]), CAST(:whole_cities AS text[]), "
            "CAST(:whole_tokens AS text[])) AS b(state, city_key, token) "
            f"JOIN contacts c ON {same_block} WHERE c.status = 'active'"
        ),
        {
            "states": [b[0] for b in housed],
            "cities": [b[1] for b in housed],
            "tokens": [b[2] for b in housed],
            "houses": [b[3] for b in housed],
            "whole_states": [b[0] for b in whole],
            "whole_cities": [b[1] for b in whole],
            "whole_tokens": [b[2] for b in whole],
        },
    )
    return [by_phone.all(), by_block.all()]


async def _sqlite_rows(
    session: AsyncSession, phones: list[str], whole: list[tuple[str, str, str]], housed: list[tuple[str, str, str, str]]
) -> list[Any]:
    """The lookups' results on SQLite: plain driver SQL with "?" parameters (statements whose
    parameter count changed with the batch would each stay in SQLAlchemy's compiled cache,
    megabytes apiece)."""
    # No condition on the contact alone (status, say) in the block lookup: with ANALYZE statistics
    # such a condition lets SQLite 3.40 build a Bloom filter on ix_contacts_block, and it fills the
    # filter with the rowid in place of the index's expression, so most lookups found nothing (164 of
    # 265 candidates in a 5,000-contact catalogue, and an import made duplicates); ``candidates``
    # leaves inactive contacts out. A test holds the lookup to a scan of an analysed catalogue.
    results: list[Any] = []
    connection = await session.connection()
    for chunk in sqlite_chunks(phones):
        marks = ", ".join("?" for _ in chunk)
        by_phone = await connection.exec_driver_sql(
            f"SELECT {COLUMNS} FROM contacts c WHERE c.phone IN ({marks})", tuple(chunk)
        )
        results.append(by_phone.all())
    # INDEXED BY: without statistics SQLite chose to build an automatic index on (status, state,
    # city_key) for every lookup — a pass over the whole table each batch (0.55 s against 0.018 s
    # for 1,000 blocks in a 100,000-contact catalogue).
    same_block = (
        f"c.state = b.state AND c.city_key = b.city_key AND {block_expression(sqlite=True, table='c.')} = b.token"
    )
    at_house = f"{same_block} AND {house_expression(sqlite=True, table='c.')} = b.house"
    lookups: list[tuple[Sequence[tuple[str, ...]], tuple[str, ...], str]] = [
        (housed, ("state", "city_key", "token", "house"), at_house),
        (whole, ("state", "city_key", "token"), same_block),
    ]
    for blocks, names, condition in lookups:
        row_marks = "(" + ", ".join("?" for _ in names) + ")"
        for block_chunk in sqlite_chunks(blocks, SQLITE_CHUNK // len(names)):
            rows_sql = ", ".join(row_marks for _ in block_chunk)
            in_blocks = await connection.exec_driver_sql(
                f"WITH b({', '.join(names)}) AS (VALUES {rows_sql}) SELECT {COLUMNS} FROM b "
                f"JOIN contacts c INDEXED BY ix_contacts_block ON {condition}",
                tuple(value for block in block_chunk for value in block),
            )
            results.append(in_blocks.all())
    return results


async def resolve(
    session: AsyncSession,
    rows: list[dict[str, Any]],
    *,
    keys: list[MatchKeys | None] | None = None,
    kinds: list[str],
    threshold: float,
) -> list[Target]:
    """A target for each new contact row, in order (``keys``: their matching keys, when computed
    already). People — individual providers — are not businesses that another listing could
    describe: they never merge and are not looked up (each NPI is someone else, even with the same
    name; a doctor and a contractor of one name in one city are two contacts)."""
    given = keys or [None] * len(rows)
    return await resolve_keys(
        session,
        [
            None if kind == "person" else (k if k is not None else keys_of(row))
            for k, row, kind in zip(given, rows, kinds, strict=True)
        ],
        threshold=threshold,
    )


async def resolve_keys(session: AsyncSession, keys: list[MatchKeys | None], *, threshold: float) -> list[Target]:
    """``resolve`` for records given by their matching keys; None for a person (a contact of its own)."""
    businesses = [k for k in keys if k is not None]
    found = await candidates(session, businesses) if businesses else {}
    by_phone: dict[str, list[int]] = defaultdict(list)
    by_block: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for contact_id, other in found.items():
        if other.phone:
            by_phone[other.phone].append(contact_id)
        by_block[_block(other)].append(contact_id)

    targets: list[Target] = []
    alone = Target()
    local_phone: dict[str, list[int]] = defaultdict(list)
    local_block: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    local_keys: dict[int, MatchKeys] = {}
    for index, record_keys in enumerate(keys):
        if record_keys is None:
            targets.append(alone)
            continue
        block = _block(record_keys)
        ids = set(by_block.get(block, ()))
        if record_keys.phone:
            ids.update(by_phone.get(record_keys.phone, ()))
        held: list[HeldApart] = []
        if ids:
            among = resolve_among(record_keys, [(i, found[i]) for i in sorted(ids)], threshold=threshold)
            held += [HeldApart(other, None, reason, score) for other, reason, score in among.held_apart]
            if among.choice is not None:
                targets.append(Target(contact_id=among.choice[0], rule=among.choice[1], held_apart=tuple(held)))
                continue
        local = set(local_block.get(block, ()))
        if record_keys.phone:
            local.update(local_phone.get(record_keys.phone, ()))
        if local:
            here = resolve_among(record_keys, [(j, local_keys[j]) for j in sorted(local)], threshold=threshold)
            held += [HeldApart(None, other, reason, score) for other, reason, score in here.held_apart]
            if here.choice is not None:
                targets.append(Target(pending=here.choice[0], rule=here.choice[1], held_apart=tuple(held)))
                continue
        targets.append(Target(held_apart=tuple(held)) if held else alone)
        local_keys[index] = record_keys
        local_block[block].append(index)
        if record_keys.phone:
            local_phone[record_keys.phone].append(index)
    return targets
