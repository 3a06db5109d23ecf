"""Telling past buyers of a suppression: when an entry joins the list, every account that revealed a
contact it covers gets a notice (the feed's row) and a ``contact.suppressed`` webhook event, and the
running enrollments it covers end, in every account; all in the entry's own transaction, so that a
crash loses none of it (D26) and a rollback sends nothing.

A notice carries the contact, the reason's class and when the entry was made; never the entry's
note. One per account and contact: a second entry covering a contact already noticed (its phone after
its email, say) tells nobody again. So announcing an entry again writes only what is missing: the
worker's sweep does, for a reveal that read the list before the entry committed and charged after the
entry read its buyers (vpx.suppression.sweep), and so does a merge of two contacts, for the buyers and
entries the kept contact took over (vpx.suppression.service.tell_buyers_of).

Notice ids order the feed, newest first, so they are handed out in commit order: writers take one
lock, held until commit (PostgreSQL; SQLite's write transaction holds the whole database), and a
reader walking below a cursor never misses a notice that commits later with a lower id.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.db import insert_unless_exists
from vpx.ids import parse_number_id, public_number_id
from vpx.models import Contact, Reveal, Suppression, SuppressionNotice
from vpx.sequences import stopping
from vpx.suppression.reasons import reason_class
from vpx.webhooks import events, outbox

# pg_advisory_xact_lock key of notice writers (any number other locks of the service do not use).
NOTICE_LOCK = 7_861_203
CHUNK = 500


def covering(entry: Suppression) -> ColumnElement[bool] | None:
    """The condition on contacts this entry covers (as find_suppression matches them), or None
    when it covers none (a contact id that is not one; an entry on the phone channel only)."""
    if entry.kind == "contact":
        number = parse_number_id("ct", entry.value)
        return None if number is None else Contact.id == number
    if entry.kind == "phone":
        return Contact.phone == entry.value
    if entry.kind == "email":
        return func.lower(Contact.email) == entry.value
    if entry.kind == "email_hash":
        return Contact.email_hash == entry.value
    if entry.kind == "phone_hash":
        return Contact.phone_hash == entry.value
    return None


async def revealers(session: AsyncSession, entry: Suppression) -> list[tuple[str, int]]:
    """(account, contact) for every reveal of a contact the entry covers, in that order. Only
    revealed contacts matter here (enrollments take revealed contacts only, D34), so an email entry
    reads the reveals, not the whole catalogue."""
    condition = covering(entry)
    if condition is None:
        return []
    rows = await session.execute(
        select(Reveal.account_id, Reveal.contact_id)
        .join(Contact, Contact.id == Reveal.contact_id)
        .where(condition)
        .order_by(Reveal.account_id, Reveal.contact_id)
    )
    return [(account_id, contact_id) for account_id, contact_id in rows]


async def announce_suppression(session: AsyncSession, entry: Suppression, *, now: datetime) -> int:
    """Notices and events for the entry's past buyers, and the covered enrollments stopped. Returns
    how many accounts-and-contacts were told."""
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": NOTICE_LOCK})
    pairs = await revealers(session, entry)
    told = await _write_notices(session, entry, pairs, now=now)
    reason = reason_class(entry.reason).value
    for account_id, contact_id in told:
        data: dict[str, Any] = {
            "contact_id": public_number_id("ct", contact_id),
            "reason": reason,
            "suppressed_at": entry.created_at,
        }
        await outbox.enqueue_event(
            session, account_id=account_id, event_type=events.CONTACT_SUPPRESSED, data=data, now=now
        )
    if covering(entry) is None:
        return len(told)
    await stopping.stop_suppressed_enrollments(
        session,
        contact_ids=sorted({contact_id for _, contact_id in pairs}),
        email=entry.value if entry.kind == "email" else None,
        now=now,
    )
    return len(told)


async def _write_notices(
    session: AsyncSession, entry: Suppression, pairs: list[tuple[str, int]], *, now: datetime
) -> list[tuple[str, int]]:
    """The notices that went in (those not written before), in id order."""
    reason = reason_class(entry.reason).value
    written: list[tuple[str, int]] = []
    for start in range(0, len(pairs), CHUNK):
        rows = [
            {
                "account_id": account_id,
                "contact_id": contact_id,
                "suppression_id": entry.id,
                "reason": reason,
                "suppressed_at": entry.created_at,
                "created_at": now,
            }
            for account_id, contact_id in pairs[start : start + CHUNK]
        ]
        inserted = await session.execute(
            insert_unless_exists(session, SuppressionNotice)
            .values(rows)
            .returning(SuppressionNotice.id, SuppressionNotice.account_id, SuppressionNotice.contact_id)
        )
        written.extend((account_id, contact_id) for _, account_id, contact_id in sorted(inserted.all()))
    return written
