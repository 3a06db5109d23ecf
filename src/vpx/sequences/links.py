"""Unsubscribe links that outlive their enrollment. An email's opt-out must keep working for at least
30 days after it was sent (CAN-SPAM), but deleting a sequence, a mailbox or an account deletes its
enrollments, where the links' tokens live. So the deletion keeps each enrollment's token digest,
account, address and sender for 31 days (``unsubscribe_links``): a click in that time still
unsubscribes the address from the account (vpx.sequences.unsubscribe), and the worker deletes the
rows after.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.db import insert_unless_exists
from vpx.models import Enrollment, Mailbox, Sequence, UnsubscribeLink

KEEP = timedelta(days=31)


async def retire(session: AsyncSession, which: ColumnElement[bool], *, now: datetime) -> int:
    """Keeps the links of the enrollments of the sequences ``which`` selects (a condition on
    ``Sequence``/``Mailbox``), before they are deleted; how many."""
    rows = (
        await session.execute(
            select(
                Enrollment.unsubscribe_digest,
                Enrollment.account_id,
                Enrollment.email,
                func.coalesce(Mailbox.from_name, Mailbox.email),
            )
            .join(Sequence, Sequence.id == Enrollment.sequence_id)
            .join(Mailbox, Mailbox.id == Sequence.mailbox_id)
            .where(which)
        )
    ).all()
    values: list[dict[str, Any]] = [
        {"digest": digest, "account_id": account, "email": email, "sender": sender, "kept_until": now + KEEP}
        for digest, account, email, sender in rows
    ]
    for start in range(0, len(values), 500):
        await session.execute(insert_unless_exists(session, UnsubscribeLink).values(values[start : start + 500]))
    return len(values)


async def find(session: AsyncSession, digest: str, *, now: datetime) -> UnsubscribeLink | None:
    link = await session.get(UnsubscribeLink, digest)
    return link if link is not None and link.kept_until > now else None


async def purge(session: AsyncSession, *, now: datetime) -> int:
    result = await session.execute(delete(UnsubscribeLink).where(UnsubscribeLink.kept_until <= now))
    return int(getattr(result, "rowcount", 0) or 0)
