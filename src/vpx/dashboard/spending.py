"""Credits spent per UTC day, for the dashboard's chart."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select, type_coerce
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.models import LedgerEntry
from vpx.money import CreditsType

CHART_DAYS = 30


@dataclass(frozen=True)
class DaySpend:
    day: date
    spent: Decimal


def _utc_day(session: AsyncSession) -> Any:
    if session.get_bind().dialect.name == "sqlite":
        # Stored as naive UTC text, "YYYY-MM-DD HH:MM:SS…".
        return func.substr(LedgerEntry.created_at, 1, 10)
    return func.to_char(func.timezone("UTC", LedgerEntry.created_at), "YYYY-MM-DD")


async def daily_spending(
    session: AsyncSession, *, account_id: str, now: datetime, days: int = CHART_DAYS
) -> list[DaySpend]:
    """One entry per day of the last ``days`` UTC days, oldest first, zero where nothing was spent.
    Spending is every debit of the ledger; free credits that expire at a month's end are not spent."""
    today = now.date()
    first = today - timedelta(days=days - 1)
    since = datetime(first.year, first.month, first.day, tzinfo=now.tzinfo)
    day = _utc_day(session)
    rows = await session.execute(
        select(day, type_coerce(func.sum(LedgerEntry.amount), CreditsType()))
        .where(
            LedgerEntry.account_id == account_id,
            LedgerEntry.amount < 0,
            LedgerEntry.kind != "free_monthly",
            LedgerEntry.created_at >= since,
        )
        .group_by(day)
    )
    spent = {date.fromisoformat(str(d)): -Decimal(total) for d, total in rows}
    every_day = [first + timedelta(days=n) for n in range(days)]
    return [DaySpend(day=d, spent=spent.get(d, Decimal(0))) for d in every_day]


@dataclass(frozen=True)
class Bar:
    day: date
    spent: Decimal
    x: float
    y: float
    height: float


def chart_bars(days: list[DaySpend], *, width: float = 600, height: float = 140) -> list[Bar]:
    """Bar geometry for an SVG chart ``width`` × ``height`` (bars grow up from the bottom)."""
    top = max((d.spent for d in days), default=Decimal(0)) or Decimal(1)
    step = width / max(1, len(days))
    bars = []
    for n, item in enumerate(days):
        h = float(item.spent / top) * height
        bars.append(Bar(day=item.day, spent=item.spent, x=n * step + 1, y=height - h, height=h))
    return bars
