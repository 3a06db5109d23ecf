"""An enrollment moving through its sequence's steps: on to the next (when it is due, in the send
window), a task step opened, the sequence finished."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.models import (
    Contact,
    Enrollment,
    SequenceMessage,
    SequenceVersion,
)
from vpx.sequences import events, schedule, service


async def enrollment_version(session: AsyncSession, enrollment: Enrollment) -> SequenceVersion:
    return await service.version_of(session, enrollment.sequence_id, enrollment.version)


def message_domain(email: str) -> str:
    return email.rsplit("@", 1)[-1] or "vpx.invalid"


async def open_task(
    session: AsyncSession, enrollment: Enrollment, mailbox_id: str, version: SequenceVersion, now: datetime
) -> None:
    """A manual task step: recorded for the user to do, and the sequence moves on."""
    session.add(
        SequenceMessage(
            enrollment_id=enrollment.id,
            account_id=enrollment.account_id,
            mailbox_id=mailbox_id,
            step=enrollment.step,
            kind="task",
            status="open",
            attempts=0,
            subject=version.steps[enrollment.step]["note"],
            created_at=now,
        )
    )
    await advance(session, enrollment, version, now, after=now)


async def advance(
    session: AsyncSession, enrollment: Enrollment, version: SequenceVersion, now: datetime, *, after: datetime
) -> None:
    enrollment.step += 1
    enrollment.updated_at = now
    if enrollment.step >= len(version.steps):
        await finish(session, enrollment, now)
        return
    contact_state = await session.scalar(select(Contact.state).where(Contact.id == enrollment.contact_id))
    window = schedule.Window.of(version.send_window)
    enrollment.next_due_at = schedule.due_at(after, version.steps[enrollment.step], window, state=contact_state)


async def finish(session: AsyncSession, enrollment: Enrollment, now: datetime) -> None:
    enrollment.status, enrollment.next_due_at, enrollment.updated_at = "finished", None, now
    await events.announce(session, enrollment, events.FINISHED, {"steps": enrollment.step}, now)
