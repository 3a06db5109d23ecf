"""Contributions (D17): rows validated one by one, deduplicated against the catalogue and against
each other (same E.164 phone, or the same business by name key + state + city key, unless strong
evidence conflicts), accepted ones added to the catalogue with source `contributed`; and what a
publisher earns from them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import month_key
from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.contacts.search import SearchBackend
from vpx.ids import new_id, public_number_id
from vpx.models import Contact, LedgerEntry
from vpx.publishers.schemas import RowResult
from vpx.publishers.validation import CheckedRow, check_row
from vpx.registries import duplicates, matching, resolution
from vpx.registries.matching import MatchKeys

CHUNK = 500
# Serialises contributions on PostgreSQL, so two at once cannot both accept the same business.
CONTRIBUTION_LOCK = 0x7670785F636F6E74
REGISTRY = "contributed"
# A contribution's record id in its source row: "ctb_" and 20 random characters.
SOURCE_PREFIX = "ctb"


def _chunks(values: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


Candidate = tuple[int, MatchKeys]


async def _candidates(
    session: AsyncSession, phones: list[str], names: list[str]
) -> tuple[dict[str, list[Candidate]], dict[tuple[str, str, str], list[Candidate]]]:
    """Catalogue contacts with one of these phones, and those with one of these name keys, with their
    matching keys, by phone and by (name key, state, city key); lowest id first."""
    columns = (
        Contact.id, Contact.name_key, Contact.state, Contact.city_key, Contact.street, Contact.phone,
        Contact.website, Contact.identifiers,
    )  # fmt: skip
    found: dict[int, tuple[Any, ...]] = {}
    for part in _chunks(sorted(set(phones))):
        found.update(
            {row[0]: tuple(row) for row in await session.execute(select(*columns).where(Contact.phone.in_(part)))}
        )
    for part in _chunks(sorted(set(names))):
        rows = await session.execute(select(*columns).where(Contact.name_key.in_(part)))
        found.update({row[0]: tuple(row) for row in rows})
    by_phone: dict[str, list[Candidate]] = defaultdict(list)
    by_business: dict[tuple[str, str, str], list[Candidate]] = defaultdict(list)
    for contact_id in sorted(found):
        _, name, state, city, street, phone, website, identifiers = found[contact_id]
        keys = resolution.stored_keys(name, state, city, street, phone, website, identifiers)
        if phone:
            by_phone[phone].append((contact_id, keys))
        by_business[(name, state, city)].append((contact_id, keys))
    return by_phone, by_business


def _first_agreeing(keys: MatchKeys, candidates: Iterable[Candidate], held: list[tuple[int, str, float]]) -> int | None:
    """The first candidate whose strong evidence does not conflict with ``keys``; those a veto keeps
    apart although their names are nearly equal go to ``held``."""
    for candidate_id, other in candidates:
        veto = matching.conflict(keys, other)
        if veto is None:
            return candidate_id
        score = 100.0 if keys.name_key == other.name_key else matching.name_similarity(keys.name_key, other.name_key)
        if score >= matching.NAME_THRESHOLD:
            held.append((candidate_id, veto, score))
    return None


async def contribute(
    session: AsyncSession,
    *,
    account_id: str,
    rows: list[Any],
    search: SearchBackend,
    now: datetime,
) -> list[RowResult]:
    """One result per row, in order; accepted rows become searchable contacts of this publisher.
    A row is a duplicate of a contact (or an earlier row) with its phone or its name in its city,
    unless their strong evidence conflicts (matching.conflict: another website, another house
    number on the street): then it is accepted, and the pair recorded as a possible duplicate."""
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": CONTRIBUTION_LOCK})
    checked = [check_row(i, raw) for i, raw in enumerate(rows)]
    valid = [(i, row) for i, row in enumerate(checked) if not row.errors]
    by_phone, by_business = await _candidates(
        session, [row.phone_key for _, row in valid], [row.business_key[0] for _, row in valid]
    )

    results: list[RowResult | None] = [
        RowResult(index=i, status="rejected", errors=row.errors) if row.errors else None
        for i, row in enumerate(checked)
    ]
    seen_phone: dict[str, list[Candidate]] = defaultdict(list)
    seen_business: dict[tuple[str, str, str], list[Candidate]] = defaultdict(list)
    accepted: list[tuple[int, CheckedRow, dict[str, Any]]] = []
    held: dict[int, list[tuple[int, str, float]]] = {}
    earlier_held: dict[int, list[tuple[int, str, float]]] = {}
    for index, row in valid:
        contact = contact_row(dict(row.fields, publisher_account_id=account_id), origin=REGISTRY, now=now)
        keys = resolution.keys_of(contact)
        mine: list[tuple[int, str, float]] = []
        existing = _first_agreeing(
            keys, [*by_phone.get(row.phone_key, ()), *by_business.get(row.business_key, ())], mine
        )
        if existing is not None:
            results[index] = RowResult(index=index, status="duplicate", contact_id=public_number_id("ct", existing))
            continue
        theirs: list[tuple[int, str, float]] = []
        earlier = _first_agreeing(
            keys, [*seen_phone.get(row.phone_key, ()), *seen_business.get(row.business_key, ())], theirs
        )
        if earlier is not None:
            results[index] = RowResult(index=index, status="duplicate", duplicate_of_index=earlier)
            continue
        held[index], earlier_held[index] = mine, theirs
        seen_phone[row.phone_key].append((index, keys))
        seen_business[row.business_key].append((index, keys))
        accepted.append((index, row, contact))

    # The record id is random and names no account: a buyer who reveals the contact sees its sources.
    sources = [(REGISTRY, new_id(SOURCE_PREFIX, 20), None) for _ in accepted]
    ids = await add_contacts(session, [contact for _, _, contact in accepted], search=search, sources=sources, now=now)
    by_index = {index: contact_id for (index, _, _), contact_id in zip(accepted, ids, strict=True)}
    pairs: list[duplicates.HeldPair] = []
    for index, contact_id in by_index.items():
        results[index] = RowResult(index=index, status="accepted", contact_id=public_number_id("ct", contact_id))
        others = [(c, v, sc) for c, v, sc in held[index]] + [(by_index[j], v, sc) for j, v, sc in earlier_held[index]]
        for other, veto, score in others:
            low, high = min(contact_id, other), max(contact_id, other)
            pairs.append(duplicates.HeldPair(low, high, veto, round(score)))
    await duplicates.record(session, pairs, found_by="contributions", now=now)
    for result in results:
        duplicate_of = result.duplicate_of_index if result is not None else None
        if result is not None and duplicate_of is not None:
            result.contact_id = public_number_id("ct", by_index[duplicate_of])
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


async def list_contributions(
    session: AsyncSession, *, account_id: str, limit: int, before_id: int | None
) -> list[tuple[Contact, int, Decimal]]:
    """The publisher's contributed contacts, newest first, each with its paid reveals and earnings."""
    query = select(Contact).where(Contact.publisher_account_id == account_id, Contact.origin == REGISTRY)
    if before_id is not None:
        query = query.where(Contact.id < before_id)
    contacts = list(await session.scalars(query.order_by(Contact.id.desc()).limit(limit)))
    references = [public_number_id("ct", c.id) for c in contacts]
    earned: dict[str, tuple[int, Decimal]] = {}
    if references:
        rows = await session.execute(
            select(LedgerEntry.reference, LedgerEntry.amount).where(
                LedgerEntry.account_id == account_id,
                LedgerEntry.kind == "revenue_share",
                LedgerEntry.reference.in_(references),
            )
        )
        for reference, amount in rows:
            count, total = earned.get(reference or "", (0, Decimal(0)))
            earned[reference or ""] = (count + 1, total + amount)
    return [(c, *earned.get(public_number_id("ct", c.id), (0, Decimal(0)))) for c in contacts]


async def earnings(
    session: AsyncSession, *, account_id: str
) -> tuple[Decimal, int, int, list[tuple[str, Decimal, int]]]:
    """Total earned, paid reveals, contributed contacts, and per-month figures (newest first)."""
    months: dict[str, tuple[Decimal, int]] = {}
    rows = await session.execute(
        select(LedgerEntry.created_at, LedgerEntry.amount).where(
            LedgerEntry.account_id == account_id, LedgerEntry.kind == "revenue_share"
        )
    )
    for created_at, amount in rows:
        key = month_key(created_at)
        total, count = months.get(key, (Decimal(0), 0))
        months[key] = (total + amount, count + 1)
    contributed = await session.scalar(
        select(func.count())
        .select_from(Contact)
        .where(Contact.publisher_account_id == account_id, Contact.origin == REGISTRY)
    )
    total = sum((v[0] for v in months.values()), Decimal(0))
    paid = sum(v[1] for v in months.values())
    ordered = [(m, v[0], v[1]) for m, v in sorted(months.items(), reverse=True)]
    return total, paid, int(contributed or 0), ordered
