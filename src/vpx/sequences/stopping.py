"""Ending the running enrollments a new suppression covers, in every account, in the suppression's
own transaction: their next steps never come due (D34 checks the list again before each send, for
the message a worker may hold at that moment)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import ColumnElement, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.models import Enrollment, SequenceMessage

STOP_REASON = "suppressed"


async def stop_suppressed_enrollments(
    session: AsyncSession, *, contact_ids: Sequence[int], email: str | None, now: datetime
) -> int:
    """Stops (``stopped``, stop reason ``suppressed``) every running enrollment of these contacts, and
    every one writing to ``email`` (lower case) when given; a message waiting for a retry is not
    sent either. Returns how many it stopped."""
    conditions: list[ColumnElement[bool]] = []
    if contact_ids:
        conditions.append(Enrollment.contact_id.in_(list(contact_ids)))
    if email:
        conditions.append(Enrollment.email == email)
    if not conditions:
        return 0
    running = list(
        await session.scalars(
            select(Enrollment.id)
            .where(Enrollment.status == "active", or_(*conditions))
            .order_by(Enrollment.id)
            .with_for_update()
        )
    )
    if not running:
        return 0
    await session.execute(
        update(Enrollment)
        .where(Enrollment.id.in_(running), Enrollment.status == "active")
        .values(status="stopped", stop_reason=STOP_REASON, next_due_at=None, updated_at=now)
    )
    await session.execute(
        update(SequenceMessage)
        .where(SequenceMessage.enrollment_id.in_(running), SequenceMessage.status == "deferred")
        .values(status="stopped", next_attempt_at=None, lease_until=None)
    )
    return len(running)
