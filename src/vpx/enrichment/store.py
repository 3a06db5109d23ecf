"""Enrichment's tables: the account's provider keys, the values it holds, cached answers, requests
counted per month. Keys are sealed here and opened only to make a provider call."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import month_key
from vpx.models import EnrichmentCacheEntry, EnrichmentKey, EnrichmentUsage, EnrichmentValue
from vpx.secrets import SecretBox


def _insert(session: AsyncSession) -> Any:
    return postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert


# --- Keys ---


async def keys_of(session: AsyncSession, account_id: str) -> list[EnrichmentKey]:
    """The account's keys in waterfall order (the order they were first stored)."""
    rows = await session.scalars(
        select(EnrichmentKey).where(EnrichmentKey.account_id == account_id).order_by(EnrichmentKey.position)
    )
    return list(rows)


async def store_key(
    session: AsyncSession,
    *,
    account_id: str,
    provider: str,
    api_key: str,
    monthly_limit: int | None,
    box: SecretBox,
    now: datetime,
) -> EnrichmentKey:
    """Stores or replaces the account's key for a provider (a replaced key keeps its place)."""
    known = await session.scalar(
        select(EnrichmentKey)
        .where(EnrichmentKey.account_id == account_id, EnrichmentKey.provider == provider)
        .with_for_update()
    )
    if known is None:
        last = await session.scalar(
            select(func.max(EnrichmentKey.position)).where(EnrichmentKey.account_id == account_id)
        )
        known = EnrichmentKey(account_id=account_id, provider=provider, position=(last or 0) + 1, created_at=now)
        session.add(known)
    known.key_sealed = box.seal(api_key)
    known.last4 = api_key[-4:]
    known.monthly_limit = monthly_limit
    known.updated_at = now
    await session.flush()
    return known


async def delete_key(session: AsyncSession, *, account_id: str, provider: str) -> bool:
    result = await session.execute(
        delete(EnrichmentKey).where(EnrichmentKey.account_id == account_id, EnrichmentKey.provider == provider)
    )
    return bool(getattr(result, "rowcount", 0))


# --- Values the account holds ---


@dataclass(frozen=True)
class HeldValue:
    person_key: str
    person_name: str | None
    field: str
    value: str
    provider: str
    provider_record_id: str | None
    confidence: float | None
    fetched_at: datetime
    previous: dict[str, Any] | None = None  # the value a refresh replaced (EnrichmentValue.previous)


async def values_of(session: AsyncSession, *, account_id: str, contact_id: int) -> list[HeldValue]:
    rows = await session.scalars(
        select(EnrichmentValue)
        .where(EnrichmentValue.account_id == account_id, EnrichmentValue.contact_id == contact_id)
        .order_by(EnrichmentValue.id)
    )
    return [
        HeldValue(
            r.person_key,
            r.person_name,
            r.field,
            r.value,
            r.provider,
            r.provider_record_id,
            r.confidence,
            r.fetched_at,
            r.previous,
        )
        for r in rows
    ]


async def add_values(session: AsyncSession, *, account_id: str, contact_id: int, values: Iterable[HeldValue]) -> None:
    """Adds values; a field the account already holds keeps its value (the first found wins, even
    when two enrichments of the contact run at once)."""
    rows = [
        {
            "account_id": account_id,
            "contact_id": contact_id,
            "person_key": v.person_key,
            "person_name": v.person_name,
            "field": v.field,
            "value": v.value,
            "provider": v.provider,
            "provider_record_id": v.provider_record_id,
            "confidence": v.confidence,
            "fetched_at": v.fetched_at,
        }
        for v in values
    ]
    if rows:
        statement = _insert(session)(EnrichmentValue).values(rows)
        await session.execute(
            statement.on_conflict_do_nothing(index_elements=["account_id", "contact_id", "person_key", "field"])
        )


async def replace_values(
    session: AsyncSession, *, account_id: str, contact_id: int, values: Iterable[HeldValue]
) -> None:
    """A refresh's values: each replaces the value held for its field, and the value replaced is kept
    as ``previous`` with its provenance. The same value from the same provider only brings the
    provenance up to date (``previous`` stays the last value that differed)."""
    values = list(values)
    if not values:
        return
    held = {
        (row.person_key, row.field): row
        for row in await session.scalars(
            select(EnrichmentValue)
            .where(EnrichmentValue.account_id == account_id, EnrichmentValue.contact_id == contact_id)
            .with_for_update()
        )
    }
    new: list[HeldValue] = []
    for value in values:
        row = held.get((value.person_key, value.field))
        if row is None:
            new.append(value)
            continue
        if (row.value, row.provider) != (value.value, value.provider):
            row.previous = {
                "value": row.value,
                "provider": row.provider,
                "provider_record_id": row.provider_record_id,
                "fetched_at": row.fetched_at.isoformat(),
                "confidence": row.confidence,
            }
        row.value = value.value
        row.provider = value.provider
        row.provider_record_id = value.provider_record_id
        row.confidence = value.confidence
        row.fetched_at = value.fetched_at
        if value.person_name:
            row.person_name = value.person_name
    await session.flush()
    await add_values(session, account_id=account_id, contact_id=contact_id, values=new)


# --- Cached answers ---


def request_key(provider: str, canonical: str) -> str:
    return hashlib.sha256(f"{provider}\x1f{canonical}".encode()).hexdigest()


@dataclass(frozen=True)
class CachedAnswer:
    found: bool
    answer: dict[str, Any]
    fetched_at: datetime


async def cached(
    session: AsyncSession, *, account_id: str, keys: list[tuple[str, str]], now: datetime
) -> dict[tuple[str, str], CachedAnswer]:
    """Unexpired answers by (provider, request key)."""
    if not keys:
        return {}
    # The provider in the condition too: the unique index is (account, provider, request key), and
    # without it an account's whole cache was read (54 ms a look-up at 300,000 answers).
    rows = await session.execute(
        select(EnrichmentCacheEntry).where(
            EnrichmentCacheEntry.account_id == account_id,
            EnrichmentCacheEntry.provider.in_(sorted({p for p, _ in keys})),
            EnrichmentCacheEntry.request_key.in_(sorted({k for _, k in keys})),
            EnrichmentCacheEntry.expires_at > now,
        )
    )
    return {(e.provider, e.request_key): CachedAnswer(e.found, e.answer, e.fetched_at) for e in rows.scalars()}


@dataclass(frozen=True)
class Answer:
    """A provider's answer to keep in the account's cache."""

    provider: str
    key: str
    found: bool
    answer: dict[str, Any]
    ttl: timedelta


async def remember(session: AsyncSession, *, account_id: str, answers: list[Answer], now: datetime) -> None:
    """Keeps the answers (one statement; an answer to the same request replaces the old one)."""
    if not answers:
        return
    statement = _insert(session)(EnrichmentCacheEntry)
    fresh = statement.excluded
    await session.execute(
        statement.on_conflict_do_update(
            index_elements=["account_id", "provider", "request_key"],
            set_={
                "found": fresh.found,
                "answer": fresh.answer,
                "fetched_at": fresh.fetched_at,
                "expires_at": fresh.expires_at,
            },
        ),
        [
            {
                "account_id": account_id,
                "provider": a.provider,
                "request_key": a.key,
                "found": a.found,
                "answer": a.answer,
                "fetched_at": now,
                "expires_at": now + a.ttl,
            }
            for a in answers
        ],
    )


# --- Requests counted per month ---


async def reserve_request(
    session: AsyncSession, *, account_id: str, provider: str, limit: int | None, now: datetime
) -> bool:
    """Counts one request to send this month, unless the month's count is at ``limit``: exact under
    concurrency (one conditional update). False: at the limit, nothing counted."""
    # One statement: insert the month's first request, or count one more unless at the limit.
    statement = _insert(session)(EnrichmentUsage).values(
        account_id=account_id, provider=provider, month=month_key(now), requests=1
    )
    statement = statement.on_conflict_do_update(
        index_elements=["account_id", "provider", "month"],
        set_={"requests": EnrichmentUsage.requests + 1},
        where=(EnrichmentUsage.requests < limit) if limit is not None else None,
    ).returning(EnrichmentUsage.requests)
    return (await session.execute(statement)).first() is not None


async def used_this_month(session: AsyncSession, *, account_id: str, now: datetime) -> dict[str, int]:
    rows = await session.execute(
        select(EnrichmentUsage.provider, EnrichmentUsage.requests).where(
            EnrichmentUsage.account_id == account_id, EnrichmentUsage.month == month_key(now)
        )
    )
    return {provider: int(count) for provider, count in rows}
