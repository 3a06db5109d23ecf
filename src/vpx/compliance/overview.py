"""Where the operator stands with the law, in one read: the next DROP deadline, the Do-Not-Call data's
age per area code, the privacy requests coming due, and the audit trail's length. Shown by
`vpx privacy status`, `vpx status`, the operator page and /metrics."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.compliance import audit
from vpx.compliance.dnc import service as dnc_service
from vpx.compliance.drop.schedule import status as drop_status
from vpx.config import Settings
from vpx.metrics import ComplianceFigures
from vpx.models import PrivacyRequest

DUE_SOON = timedelta(days=10)


async def overview(session: AsyncSession, settings: Settings, *, now: datetime) -> dict[str, Any]:
    drop = await drop_status(session, settings, now=now)
    area_codes = await dnc_service.area_codes(session, now=now)
    open_requests = list(
        await session.scalars(
            select(PrivacyRequest).where(PrivacyRequest.status == "open").order_by(PrivacyRequest.expected_by)
        )
    )
    requests: list[dict[str, Any]] = [
        {
            "id": r.id,
            "type": r.type,
            "expected_by": r.expected_by,
            "days_left": round((r.expected_by - now).total_seconds() / 86_400, 2),
            "verified": r.verified,
        }
        for r in open_requests
    ]
    batch = drop["open_batch"]
    deadlines = [d for d in (batch["deadline"] if batch else None, drop["must_access_by"]) if d is not None]
    return {
        "drop": {
            "configured": drop["configured"],
            "last_pull_at": drop["last_pull_at"],
            "next_pull_due": drop["next_pull_due"],
            "must_access_by": drop["must_access_by"],
            "next_deadline": min(deadlines) if deadlines else None,
            "open_batch": batch,
            "warnings": drop["warnings"],
        },
        "dnc": {
            "area_codes": area_codes,
            "stale": [a["area_code"] for a in area_codes if not a["fresh"]],
        },
        "privacy_requests": {
            "open": len(requests),
            "overdue": sum(1 for r in requests if r["days_left"] < 0),
            "due_soon": [r for r in requests if r["expected_by"] - now <= DUE_SOON],
        },
        "audit_entries": await audit.count(session),
    }


async def figures(session: AsyncSession, settings: Settings, *, now: datetime) -> ComplianceFigures:
    """The overview as /metrics shows it."""
    found = await overview(session, settings, now=now)
    drop = found["drop"]
    batch = drop["open_batch"]
    last_pull = drop["last_pull_at"]
    must_access = drop["must_access_by"]
    return ComplianceFigures(
        drop_deadline_seconds=(batch["deadline"] - now).total_seconds() if batch else None,
        drop_undecided=(batch["items"] - batch["decided"]) if batch else 0,
        drop_last_pull_age_seconds=(now - last_pull).total_seconds() if last_pull is not None else None,
        drop_must_access_seconds=(must_access - now).total_seconds() if must_access is not None else None,
        requests_open=found["privacy_requests"]["open"],
        requests_overdue=found["privacy_requests"]["overdue"],
        dnc_age_days={a["area_code"]: a["age_days"] for a in found["dnc"]["area_codes"]},
    )
