"""The quality figures operators read (`vpx quality`, GET /api/v1/admin/quality): the catalogue's
emails by deliverability status, bounce rates by source and by import day, the reports and what
became of them, and the refunds paid each month. Reads only; each figure is one grouped query."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import Date, cast, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import month_key
from vpx.db import driver_datetime
from vpx.deliverability.checks import STATUSES
from vpx.models import Contact, ContactSource
from vpx.models.quality import BadField, ContactReport, DataRefund
from vpx.quality.schemas import (
    BounceRate,
    DayBounceRate,
    MonthRefunds,
    QualityFigures,
    ReportCounts,
    SourceBounceRate,
    StatusShare,
)

_HAS_EMAIL = Contact.email.is_not(None)


def _rate(bounced: int, emails: int) -> float:
    return round(bounced / emails, 6) if emails else 0.0


async def quality_figures(session: AsyncSession, *, now: datetime) -> QualityFigures:
    by_status = dict(
        (
            await session.execute(
                select(Contact.email_status, func.count()).where(_HAS_EMAIL).group_by(Contact.email_status)
            )
        ).all()
    )
    emails = sum(by_status.values())
    bounced = by_status.get("bounced", 0)
    # Every status the service knows, in its order, then any other found (none, normally).
    names = [*STATUSES, *sorted(set(by_status) - set(STATUSES))]
    return QualityFigures(
        generated_at=now,
        emails=emails,
        email_status=[
            StatusShare(status=name, count=by_status.get(name, 0), share=_rate(by_status.get(name, 0), emails))
            for name in names
        ],
        bounce_rate=BounceRate(emails=emails, bounced=bounced, rate=_rate(bounced, emails)),
        bounce_rate_by_source=await _by_source(session),
        bounce_rate_by_import_date=await _by_import_day(session),
        bad_fields=await _bad_fields(session),
        reports=await _reports(session),
        refunds_by_month=await _refunds(session),
    )


def _bounced_count() -> Any:
    return func.count().filter(Contact.email_status == "bounced")


async def _by_source(session: AsyncSession) -> list[SourceBounceRate]:
    """A contact with records in two registries counts in both."""
    rows = await session.execute(
        select(ContactSource.registry_name, func.count(func.distinct(Contact.id)), _distinct_bounced())
        .join(Contact, Contact.id == ContactSource.contact_id)
        .where(_HAS_EMAIL)
        .group_by(ContactSource.registry_name)
        .order_by(ContactSource.registry_name)
    )
    return [
        SourceBounceRate(source=source, emails=emails, bounced=bounced or 0, rate=_rate(bounced or 0, emails))
        for source, emails, bounced in rows
    ]


def _distinct_bounced() -> Any:
    return func.count(func.distinct(Contact.id)).filter(Contact.email_status == "bounced")


async def _by_import_day(session: AsyncSession) -> list[DayBounceRate]:
    """By the UTC day each contact's first record entered the catalogue."""
    first = (
        select(ContactSource.contact_id, func.min(ContactSource.created_at).label("imported_at"))
        .group_by(ContactSource.contact_id)
        .subquery()
    )
    day = (
        func.date(first.c.imported_at)
        if session.get_bind().dialect.name == "sqlite"
        else cast(func.timezone("UTC", first.c.imported_at), Date)
    )
    rows = await session.execute(
        select(day.label("day"), func.count(), _bounced_count())
        .select_from(first)
        .join(Contact, Contact.id == first.c.contact_id)
        .where(_HAS_EMAIL)
        .group_by(day)
        .order_by(day)
    )
    return [
        DayBounceRate(imported_on=_day(value), emails=emails, bounced=bounced or 0, rate=_rate(bounced or 0, emails))
        for value, emails, bounced in rows
    ]


def _day(value: date | str) -> date:
    return date.fromisoformat(value) if isinstance(value, str) else value


async def _bad_fields(session: AsyncSession) -> dict[str, int]:
    rows = await session.execute(select(BadField.field, func.count()).group_by(BadField.field))
    found = dict(rows.all())
    return {name: found.get(name, 0) for name in ("phone", "email", "website", "address")}


async def _reports(session: AsyncSession) -> ReportCounts:
    found = dict(
        (await session.execute(select(ContactReport.status, func.count()).group_by(ContactReport.status))).all()
    )
    return ReportCounts(
        opened=sum(found.values()),
        open=found.get("open", 0),
        confirmed=found.get("confirmed", 0),
        dismissed=found.get("dismissed", 0),
    )


async def _refunds(session: AsyncSession) -> list[MonthRefunds]:
    """Summed here: refunds are few, and months are spelled alike on both databases this way."""
    months: dict[str, list[Decimal]] = defaultdict(list)
    # Refunds paid: a share withheld whole (the monthly limit, expired free credits) paid nothing.
    for credits, created_at in await session.execute(
        select(DataRefund.credits, DataRefund.created_at).where(DataRefund.credits > 0)
    ):
        at = driver_datetime(created_at)
        assert at is not None
        months[month_key(at)].append(credits)
    return [
        MonthRefunds(month=month, count=len(amounts), credits=sum(amounts, Decimal(0)))
        for month, amounts in sorted(months.items())
    ]
