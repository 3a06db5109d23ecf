"""Contributions (D17): rows validated one by one, counted against the account's daily budget
(vpx.publishers.budget), deduplicated against the catalogue and against each other
(vpx.publishers.dedup), accepted ones added to the catalogue with source `contributed`; and what a
publisher earns from them.

A duplicate names the contact it repeats only to an account that contributed or revealed it: to any
other account the answer would be a free look-up of who has a phone. Deactivated contacts are out of
the catalogue for buyers and are not duplicates: a row for one is accepted as a new contact, and
never names it.

No work of a large request holds the event loop: checking rows and matching them run in a worker
thread, statements go in bounded chunks, and on SQLite through the bulk session (``BulkWriteSession``)
whose statements run in the driver's thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import func, or_, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import month_key
from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.contacts.search import SearchBackend
from vpx.ids import new_id, public_number_id
from vpx.models import Contact, LedgerEntry, Reveal
from vpx.publishers import budget, dedup
from vpx.publishers.schemas import RowResult
from vpx.publishers.validation import CheckedRow, check_row
from vpx.registries import duplicates, resolution
from vpx.registries.matching import MatchKeys

# Values per IN list when looking candidates up.
CHUNK = 500
# Contacts inserted per statement: about 3,000 parameters, and a short turn of the event loop each.
INSERT_CHUNK = 100
# Serialises contributions on PostgreSQL, so two at once cannot both accept the same business.
CONTRIBUTION_LOCK = 0x7670785F636F6E74
REGISTRY = "contributed"
# A contribution's record id in its source row: "ctb_" and 20 random characters.
SOURCE_PREFIX = "ctb"
# A deactivated contact is no duplicate (see the module's docstring); merged ones are, as their
# business lives on in the contact they were merged into.
NOT_CANDIDATES = ("deactivated",)


def _chunks(values: Sequence[Any], size: int = CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


@dataclass(frozen=True, slots=True)
class _Row:
    """A valid row, ready to be matched and stored."""

    index: int
    phone: str
    business: dedup.BusinessKey
    keys: MatchKeys
    contact: dict[str, Any]


def _checked(rows: list[Any], *, account_id: str, now: datetime) -> tuple[list[CheckedRow], list[_Row]]:
    checked = [check_row(i, raw) for i, raw in enumerate(rows)]
    valid = []
    for index, row in enumerate(checked):
        if row.errors:
            continue
        contact = contact_row(dict(row.fields, publisher_account_id=account_id), origin=REGISTRY, now=now)
        valid.append(_Row(index, row.phone_key, row.business_key, resolution.keys_of(contact), contact))
    return checked, valid


_COLUMNS = (
    Contact.id, Contact.name_key, Contact.state, Contact.city_key, Contact.street, Contact.phone,
    Contact.website, Contact.identifiers, Contact.status, Contact.publisher_account_id,
)  # fmt: skip


async def _candidates(session: AsyncSession, valid: list[_Row]) -> list[tuple[Any, ...]]:
    """The catalogue contacts (deactivated ones aside) a row may be compared with, lowest id first:
    those with one of these phones; of these businesses, those that list another phone among their
    identifiers or have none (the others disagree with every row but one with their phone, found by
    it), and each business's first active contact (vpx.publishers.dedup). However often a business
    was contributed before, a row brings a few contacts, not all of them."""
    found: dict[int, tuple[Any, ...]] = {}
    live = Contact.status.not_in(NOT_CANDIDATES)
    for part in _chunks(sorted({row.phone for row in valid})):
        rows = await session.execute(select(*_COLUMNS).where(Contact.phone.in_(part), live))
        found.update({row[0]: tuple(row) for row in rows})
    for keys in _chunks(sorted({row.business for row in valid})):
        # The index on (name_key, state, city_key) serves this superset of the businesses.
        business = (
            Contact.name_key.in_(sorted({k[0] for k in keys})),
            Contact.state.in_(sorted({k[1] for k in keys})),
            Contact.city_key.in_(sorted({k[2] for k in keys})),
        )
        firsts = (
            select(func.min(Contact.id))
            .where(*business, Contact.status == "active")
            .group_by(Contact.name_key, Contact.state, Contact.city_key)
        )
        other_phones = or_(Contact.phone.is_(None), Contact.identifiers.like("%tel:%"), Contact.id.in_(firsts))
        rows = await session.execute(select(*_COLUMNS).where(*business, live, other_phones))
        found.update({row[0]: tuple(row) for row in rows})
    return [found[contact_id] for contact_id in sorted(found)]


@dataclass(slots=True)
class _Outcome:
    """What became of a valid row: a duplicate of catalogue contacts (``contacts``, in the order
    compared) or of an earlier row (``earlier``), else accepted, possibly held apart from others."""

    contacts: tuple[dedup.Member, ...] = ()
    earlier: int | None = None
    held_contacts: tuple[dedup.Held, ...] = ()
    held_rows: tuple[dedup.Held, ...] = ()


def _match(valid: list[_Row], candidates: list[tuple[Any, ...]]) -> list[_Outcome]:
    """Each valid row against the catalogue, then against the rows accepted before it."""
    catalogue = dedup.Pool()
    for contact_id, name, state, city, street, phone, website, identifiers, status, _ in candidates:
        keys = resolution.stored_keys(name, state, city, street, phone, website, identifiers)
        catalogue.add(dedup.Member(contact_id, keys, active=status == "active"), (name, state, city))
    batch = dedup.Pool()
    outcomes = []
    for row in valid:
        known = dedup.compare(catalogue, row.keys, row.phone, row.business)
        if known.agreeing:
            outcomes.append(_Outcome(contacts=known.agreeing))
            continue
        earlier = dedup.compare(batch, row.keys, row.phone, row.business)
        if earlier.agreeing:
            outcomes.append(_Outcome(earlier=earlier.agreeing[0].id))
            continue
        # Held apart from the catalogue's business, the row is not paired with the batch's first
        # of it too: that one is paired with the same contact already.
        in_catalogue = _first_id(catalogue, row.business) is not None
        held_rows = tuple(h for h in earlier.held if not (in_catalogue and h.id == _first_id(batch, row.business)))
        outcomes.append(_Outcome(held_contacts=known.held, held_rows=held_rows))
        batch.add(dedup.Member(row.index, row.keys), row.business)
    return outcomes


def _first_id(pool: dedup.Pool, business: dedup.BusinessKey) -> int | None:
    group = pool.businesses.get(business)
    return group.first.id if group is not None and group.first is not None else None


async def _known(session: AsyncSession, account_id: str, members: Iterable[dedup.Member]) -> set[int]:
    """Of these catalogue contacts, the active ones this account revealed."""
    ids = sorted({member.id for member in members if member.active})
    known: set[int] = set()
    for part in _chunks(ids):
        known.update(
            await session.scalars(
                select(Reveal.contact_id).where(Reveal.account_id == account_id, Reveal.contact_id.in_(part))
            )
        )
    return known


async def contribute(
    session: AsyncSession,
    *,
    account_id: str,
    rows: list[Any],
    search: SearchBackend,
    now: datetime,
    rows_per_day: int,
) -> list[RowResult]:
    """One result per row, in order; accepted rows become searchable contacts of this publisher.
    Counts the rows against the account's daily budget first (refusing the whole request past it)."""
    await budget.take_rows(session, account_id=account_id, rows=len(rows), budget=rows_per_day, now=now)
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": CONTRIBUTION_LOCK})
    checked, valid = await asyncio.to_thread(_checked, rows, account_id=account_id, now=now)
    candidates = await _candidates(session, valid)
    mine = {row[0] for row in candidates if row[9] == account_id and row[8] == "active"}
    outcomes = await asyncio.to_thread(_match, valid, candidates)
    known = mine | await _known(session, account_id, (m for o in outcomes for m in o.contacts if m.id not in mine))

    results: list[RowResult | None] = [
        RowResult(index=i, status="rejected", errors=row.errors) if row.errors else None
        for i, row in enumerate(checked)
    ]
    accepted = [(row, outcome) for row, outcome in zip(valid, outcomes, strict=True) if not _repeats(outcome)]
    by_index: dict[int, int] = {}
    for part in _chunks(accepted, INSERT_CHUNK):
        # The record id is random and names no account: a buyer who reveals the contact sees its sources.
        sources = [(REGISTRY, new_id(SOURCE_PREFIX, 20), None) for _ in part]
        ids = await add_contacts(session, [row.contact for row, _ in part], search=search, sources=sources, now=now)
        by_index.update({row.index: contact_id for (row, _), contact_id in zip(part, ids, strict=True)})

    pairs: dict[tuple[int, int], duplicates.HeldPair] = {}
    for row, outcome in zip(valid, outcomes, strict=True):
        if outcome.contacts:
            # Named only to an account that knows it: the first such contact the row repeats.
            named = next((m.id for m in outcome.contacts if m.id in known), None)
            shown = public_number_id("ct", named) if named is not None else None
            results[row.index] = RowResult(index=row.index, status="duplicate", contact_id=shown)
        elif outcome.earlier is not None:
            results[row.index] = RowResult(
                index=row.index,
                status="duplicate",
                contact_id=public_number_id("ct", by_index[outcome.earlier]),
                duplicate_of_index=outcome.earlier,
            )
        else:
            contact_id = by_index[row.index]
            results[row.index] = RowResult(
                index=row.index, status="accepted", contact_id=public_number_id("ct", contact_id)
            )
            held = [(h.id, h) for h in outcome.held_contacts] + [(by_index[h.id], h) for h in outcome.held_rows]
            for other, h in held:
                low, high = min(contact_id, other), max(contact_id, other)
                pairs.setdefault((low, high), duplicates.HeldPair(low, high, h.reason, round(h.score)))
    await duplicates.record(session, list(pairs.values()), found_by="contributions", now=now)
    assert all(r is not None for r in results)
    return [r for r in results if r is not None]


def _repeats(outcome: _Outcome) -> bool:
    return bool(outcome.contacts) or outcome.earlier is not None


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
