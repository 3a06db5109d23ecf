"""The daily contribution budget (D17): the rows an account may send to be contributed per UTC day.

Every row sent counts, accepted, duplicate or rejected: a duplicate answer tells whether the catalogue
holds a phone or a business, and each accepted email makes the worker ask the DNS of its domain, so
both are bounded by the budget. A request that would pass it is refused whole and counts nothing.

The count is taken in the request's own transaction, by one conditional upsert: on PostgreSQL the
account's row stays locked until the request commits or rolls back, so concurrent requests add up
exactly; an idempotent repeat answers from its stored response and is not counted again.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.errors import InvalidParameters, RateLimited
from vpx.models import ContributionDay


def _next_day(now: datetime) -> datetime:
    today = now.astimezone(UTC).date()
    return datetime(today.year, today.month, today.day, tzinfo=UTC) + timedelta(days=1)


async def take_rows(session: AsyncSession, *, account_id: str, rows: int, budget: int, now: datetime) -> int:
    """Counts ``rows`` against the account's budget for today (UTC) and returns today's count with
    them; refuses (nothing counted) a request larger than the budget (422) or one that would pass
    what is left of it today (429 with Retry-After until midnight UTC)."""
    if rows > budget:
        raise InvalidParameters.field(
            "contacts", f"this account may contribute at most {budget:,} rows a day; send {budget:,} or fewer"
        )
    day = now.astimezone(UTC).date()
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    statement = dialect.insert(ContributionDay).values(account_id=account_id, day=day, rows=rows)
    total = ContributionDay.rows + statement.excluded.rows
    counted = await session.scalar(
        statement.on_conflict_do_update(
            index_elements=["account_id", "day"], set_={"rows": total}, where=total <= budget
        ).returning(ContributionDay.rows)
    )
    if counted is not None:
        return int(counted)
    used = await session.scalar(
        select(ContributionDay.rows).where(ContributionDay.account_id == account_id, ContributionDay.day == day)
    )
    left = max(budget - int(used or 0), 0)
    retry = max(math.ceil((_next_day(now) - now).total_seconds()), 1)
    detail = f"This account may contribute {budget:,} rows a day (UTC) "
    if left:
        detail += f"and has {left:,} left today; this request has {rows:,}. Send {left:,} or fewer, or try again "
    else:
        detail += "and has sent them all today. Try again "
    raise RateLimited(detail + "after midnight UTC.", headers={"Retry-After": str(retry)})
