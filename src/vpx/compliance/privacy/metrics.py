"""The yearly figures the law asks a data broker to publish by 1 July (Civ. Code 1798.99.85, 11 CCR
7102): requests received, complied with in whole or in part, and denied (by reason), and the mean and
median days to answer, DROP's and direct requests apart.

- Direct requests count in the year they were received, by type; complied with = fulfilled (an
  opt-out at once); denied by the operator's reason; days from receipt to the decision.
- DROP's work items count in the year of their download: complied with = deleted (3) or opted out
  (4); denied = exempted (2, reason ``exempt``); not found (5) is neither, shown apart (no personal
  information was held); days from the download to the accepted answer.
"""

from __future__ import annotations

import statistics
from collections import Counter
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.models import DropBatch, DropItem, PrivacyRequest

TYPES = ("access", "deletion", "correction", "opt_out")


def _days(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"mean_days": None, "median_days": None}
    return {"mean_days": round(statistics.fmean(values), 2), "median_days": round(statistics.median(values), 2)}


def _year(year: int) -> tuple[datetime, datetime]:
    return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)


async def yearly(session: AsyncSession, *, year: int) -> dict[str, Any]:
    start, end = _year(year)
    direct: dict[str, Any] = {}
    requests = list(
        await session.scalars(
            select(PrivacyRequest).where(PrivacyRequest.received_at >= start, PrivacyRequest.received_at < end)
        )
    )
    for kind in TYPES:
        mine = [r for r in requests if r.type == kind]
        answered = [(r.decided_at - r.received_at).total_seconds() / 86_400 for r in mine if r.decided_at is not None]
        direct[kind] = {
            "received": len(mine),
            "complied": sum(1 for r in mine if r.status == "fulfilled"),
            "denied": sum(1 for r in mine if r.status == "denied"),
            "denied_by_reason": dict(
                sorted(Counter(r.deny_reason or "other" for r in mine if r.status == "denied").items())
            ),
            "open": sum(1 for r in mine if r.status == "open"),
            **_days(answered),
        }
    rows = await session.execute(
        select(DropItem.status, DropBatch.downloaded_at, DropBatch.reported_at)
        .join(DropBatch, DropBatch.id == DropItem.batch_id)
        .where(DropBatch.downloaded_at >= start, DropBatch.downloaded_at < end)
    )
    statuses: Counter[int | None] = Counter()
    answered_days: list[float] = []
    for status, downloaded_at, reported_at in rows:
        statuses[status] += 1
        if reported_at is not None:
            answered_days.append((reported_at - downloaded_at).total_seconds() / 86_400)
    drop = {
        "received": sum(statuses.values()),
        "complied": statuses[3] + statuses[4],
        "deleted": statuses[3],
        "opted_out": statuses[4],
        "denied": statuses[2],
        "denied_by_reason": {"exempt": statuses[2]} if statuses[2] else {},
        "not_found": statuses[5],
        "open": statuses[None],
        **_days(answered_days),
    }
    return {"year": year, "direct": direct, "drop": drop}
