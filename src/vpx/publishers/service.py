"""Contributions (D17): rows validated one by one, deduplicated against the catalogue and against
each other (same E.164 phone, or the same business by name key + state + city key), accepted ones
added to the catalogue with source `contributed`; and what a publisher earns from them."""

from __future__ import annotations

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

CHUNK = 500
# Serialises contributions on PostgreSQL, so two at once cannot both accept the same business.
CONTRIBUTION_LOCK = 0x7670785F636F6E74
REGISTRY = "contributed"


def _chunks(values: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(values), CHUNK):
        yield values[start : start + CHUNK]


async def _known_phones(session: AsyncSession, phones: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for part in _chunks(sorted(set(phones))):
        rows = await session.execute(
            select(Contact.phone, func.min(Contact.id)).where(Contact.phone.in_(part)).group_by(Contact.phone)
        )
        found.update({str(phone): int(contact_id) for phone, contact_id in rows})
    return found


async def _known_businesses(session: AsyncSession, keys: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], int]:
    wanted = set(keys)
    found: dict[tuple[str, str, str], int] = {}
    for part in _chunks(sorted({k[0] for k in wanted})):
        rows = await session.execute(
            select(Contact.name_key, Contact.state, Contact.city_key, Contact.id).where(Contact.name_key.in_(part))
        )
        for name, state, city, contact_id in rows:
            key = (name, state, city)
            if key in wanted and (key not in found or contact_id < found[key]):
                found[key] = contact_id
    return found


async def contribute(
    session: AsyncSession,
    *,
    account_id: str,
    rows: list[Any],
    search: SearchBackend,
    now: datetime,
) -> list[RowResult]:
    """One result per row, in order; accepted rows become searchable contacts of this publisher."""
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": CONTRIBUTION_LOCK})
    checked = [check_row(i, raw) for i, raw in enumerate(rows)]
    valid = [(i, row) for i, row in enumerate(checked) if not row.errors]
    phones = await _known_phones(session, [row.phone_key for _, row in valid])
    businesses = await _known_businesses(session, [row.business_key for _, row in valid])

    results: list[RowResult | None] = [
        RowResult(index=i, status="rejected", errors=row.errors) if row.errors else None
        for i, row in enumerate(checked)
    ]
    seen_phone: dict[str, int] = {}
    seen_business: dict[tuple[str, str, str], int] = {}
    accepted: list[tuple[int, CheckedRow]] = []
    for index, row in valid:
        existing = phones.get(row.phone_key) or businesses.get(row.business_key)
        if existing is not None:
            results[index] = RowResult(index=index, status="duplicate", contact_id=public_number_id("ct", existing))
            continue
        earlier = seen_phone.get(row.phone_key, seen_business.get(row.business_key))
        if earlier is not None:
            results[index] = RowResult(index=index, status="duplicate", duplicate_of_index=earlier)
            continue
        seen_phone[row.phone_key] = index
        seen_business[row.business_key] = index
        accepted.append((index, row))

    contact_rows = []
    for _, row in accepted:
        fields = dict(row.fields, publisher_account_id=account_id)
        contact_rows.append(contact_row(fields, origin=REGISTRY, now=now))
    sources = [(REGISTRY, new_id(account_id[:24], 20), None) for _ in accepted]
    ids = await add_contacts(session, contact_rows, search=search, sources=sources, now=now)
    by_index = {index: contact_id for (index, _), contact_id in zip(accepted, ids, strict=True)}
    for index, contact_id in by_index.items():
        results[index] = RowResult(index=index, status="accepted", contact_id=public_number_id("ct", contact_id))
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
