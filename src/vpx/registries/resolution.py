"""Entity resolution, the search part: candidates for a batch of new records, then a decision each.

Candidates come from indexed blocks only, never from a scan: contacts with the same phone, and
contacts in the same state and city whose name starts with the same word (``ix_contacts_block``, an
expression index on state, city and that word). Records earlier in the same batch are candidates too, so
a business listed twice in one file becomes one contact. rapidfuzz only runs within a block.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.normalise import block_token, street_key
from vpx.registries.bulk import SQLITE_CHUNK, sqlite_chunks
from vpx.registries.matching import MatchKeys, best_match, house_number, match_name


@dataclass(frozen=True, slots=True)
class Target:
    """Where a new record goes: an existing contact, a contact created earlier in the batch
    (``pending``, its index), or a new contact of its own (both None)."""

    contact_id: int | None = None
    pending: int | None = None
    rule: str | None = None


def keys_of(row: dict[str, Any]) -> MatchKeys:
    return MatchKeys(
        name_key=match_name(row["name_key"]),
        state=row["state"],
        city_key=row["city_key"],
        street_key=street_key(row.get("street")),
        phone=row.get("phone"),
        block=block_token(row["name_key"]),
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


COLUMNS = "c.id, c.name_key, c.state, c.city_key, c.street, c.phone, c.status"
PHONE_AMONG = "c.phone = ANY(CAST(:phones AS text[]))"
# A block's contacts that may be at a compatible address (matching.addresses_compatible) for a
# record whose street key starts with the house number ``b.house``: those whose street key's first
# word may be that number, or who may have no street key. The rule itself is applied afterwards; this
# only leaves out contacts it is certain to refuse. For a street in ASCII, its key's words are its
# own in lower case, so a key starting with the number has the number in the lower-cased street,
# and a street without a letter or digit has no key; a street with any other character (accents,
# other scripts' digits, fullwidth forms: folding may change them) is always fetched. A contact left
# out can still be found by the phone rule: phones have their own lookup.
NEAR_POSTGRES = (
    "(b.house IS NULL OR c.street IS NULL OR strpos(lower(c.street), b.house) > 0 "
    "OR c.street !~ '[A-Za-z0-9]' OR c.street ~ '[^ -~]')"
)
NEAR_SQLITE = (
    "(b.house IS NULL OR c.street IS NULL OR instr(lower(c.street), b.house) > 0 "
    "OR c.street NOT GLOB '*[A-Za-z0-9]*' OR c.street GLOB '*[^ -~]*')"
)


def _lookup(keys: MatchKeys) -> tuple[str, str, str, str | None]:
    """A record's block, and the house number its candidates are narrowed to (None: the whole block,
    for a record without a street, or whose street does not start with a number in ASCII digits)."""
    number = house_number(keys.street_key) if keys.street_key else ""
    return keys.state, keys.city_key, keys.block, number if number and number.isascii() else None


@lru_cache(maxsize=1 << 16)
def _stored_keys(name_key: str, state: str, city_key: str, street: str | None, phone: str | None) -> MatchKeys:
    # A large block (a common first word in a large city) is fetched again for batch after batch;
    # its contacts' keys are computed once (5.6 s of a 1,000,000-row import before this cache).
    return MatchKeys(match_name(name_key), state, city_key, street_key(street), phone, block_token(name_key))


async def candidates(session: AsyncSession, keys: list[MatchKeys]) -> dict[int, MatchKeys]:
    """Active contacts that the rules may find the same as one of these records, with their keys:
    every contact with a record's phone, and every contact in a record's block at an address
    compatible with the record's (and possibly a few more)."""
    found: dict[int, MatchKeys] = {}

    def take(rows: Any) -> None:
        for row in rows:
            if row[6] == "active":
                found[row[0]] = _stored_keys(row[1], row[2], row[3], row[4], row[5])

    postgres = session.get_bind().dialect.name == "postgresql"
    phones = sorted({k.phone for k in keys if k.phone})
    # A block looked up once per house number in it (or whole, once, when any record needs it whole).
    lookups = {_lookup(k) for k in keys if k.block}
    whole = {lookup[:3] for lookup in lookups if lookup[3] is None}
    blocks = sorted(
        (lookup for lookup in lookups if lookup[3] is None or lookup[:3] not in whole),
        key=lambda lookup: (lookup[0], lookup[1], lookup[2], lookup[3] or ""),
    )
    if postgres:
        # Arrays, not IN lists: one parameter each, whatever the batch size.
        take(
            await session.execute(
                text(f"SELECT {COLUMNS} FROM contacts c WHERE {PHONE_AMONG} AND c.status = 'active'"),
                {"phones": phones},
            )
        )
        take(
            await session.execute(
                text(
                    f"SELECT {COLUMNS} FROM unnest(CAST(:states AS text[]), CAST(:cities AS text[]), "
                    "CAST(:tokens AS text[]), CAST(:houses AS text[])) AS b(state, city_key, token, house) "
                    "JOIN contacts c ON c.state = b.state AND c.city_key = b.city_key "
                    f"AND {block_expression(sqlite=False, table='c.')} = b.token "
                    f"WHERE c.status = 'active' AND {NEAR_POSTGRES}"
                ),
                {
                    "states": [b[0] for b in blocks],
                    "cities": [b[1] for b in blocks],
                    "tokens": [b[2] for b in blocks],
                    "houses": [b[3] for b in blocks],
                },
            )
        )
        return found
    # SQLite: plain driver SQL with "?" parameters. Statements whose parameter count changes with the
    # batch would each stay in SQLAlchemy's compiled cache, megabytes apiece. No condition on the
    # contact alone (status, say) in the block lookup: with ANALYZE statistics such a condition lets
    # SQLite 3.40 build a Bloom filter on ix_contacts_block, and it fills the filter with the rowid in
    # place of the index's expression, so most lookups found nothing (164 of 265 candidates in a
    # 5,000-contact catalogue, and an import made duplicates). NEAR_SQLITE names the block row too, so
    # it is no such condition; ``take`` leaves inactive contacts out. A test holds the lookup to a
    # scan of an analysed catalogue.
    connection = await session.connection()
    for chunk in sqlite_chunks(phones):
        marks = ", ".join("?" for _ in chunk)
        take(
            await connection.exec_driver_sql(
                f"SELECT {COLUMNS} FROM contacts c WHERE c.phone IN ({marks})", tuple(chunk)
            )
        )
    # INDEXED BY: without statistics SQLite chose to build an automatic index on (status, state,
    # city_key) for every lookup — a pass over the whole table each batch (0.55 s against 0.018 s
    # for 1,000 blocks in a 100,000-contact catalogue).
    expression = block_expression(sqlite=True, table="c.")
    for block_chunk in sqlite_chunks(blocks, SQLITE_CHUNK // 4):
        rows_sql = ", ".join("(?, ?, ?, ?)" for _ in block_chunk)
        take(
            await connection.exec_driver_sql(
                f"WITH b(state, city_key, token, house) AS (VALUES {rows_sql}) SELECT {COLUMNS} FROM b "
                "JOIN contacts c INDEXED BY ix_contacts_block "
                f"ON c.state = b.state AND c.city_key = b.city_key AND {expression} = b.token "
                f"WHERE {NEAR_SQLITE}",
                tuple(value for block in block_chunk for value in block),
            )
        )
    return found


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
        if ids:
            choice = best_match(record_keys, [(i, found[i]) for i in sorted(ids)], threshold=threshold)
            if choice is not None:
                targets.append(Target(contact_id=choice[0], rule=choice[1]))
                continue
        local = set(local_block.get(block, ()))
        if record_keys.phone:
            local.update(local_phone.get(record_keys.phone, ()))
        if local:
            local_choice = best_match(record_keys, [(j, local_keys[j]) for j in sorted(local)], threshold=threshold)
            if local_choice is not None:
                targets.append(Target(pending=local_choice[0], rule=local_choice[1]))
                continue
        targets.append(alone)
        local_keys[index] = record_keys
        local_block[block].append(index)
        if record_keys.phone:
            local_phone[record_keys.phone].append(index)
    return targets
