"""Replies and bounces: inbound mail read from the mailbox over IMAP (by the worker) or posted to
`/mailboxes/{id}/inbound`, matched to the messages vpx sent by their Message-IDs.

A reply (``In-Reply-To``/``References`` naming a sent message) stops its enrollment as ``replied``;
an automatic answer or out-of-office (RFC 3834) does not; a delivery status notification (RFC 3464)
for a sent message marks it ``bounced``. Each inbound message counts once, however often it is read.
The customer's mailbox is never changed: read-only, nothing marked read.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from datetime import datetime, timedelta

from sqlalchemy import or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import Clock
from vpx.config import Settings
from vpx.db import Database
from vpx.mailboxes import service as mailbox_service
from vpx.mailboxes.imap import ImapError, fetch_since
from vpx.mailboxes.inbound import InboundVerdict, canonical_message_id, classify
from vpx.models import Enrollment, InboundMessage, Mailbox, SequenceMessage
from vpx.secrets import SecretBox
from vpx.sequences import events, sending

log = logging.getLogger("vpx.sequences")


def _forms(message_id: str) -> list[str]:
    """The ways a Message-ID may have been stored: as vpx wrote it, in angle brackets, and bare."""
    canonical = canonical_message_id(message_id) or message_id
    bare = canonical.strip("<>")
    return sorted({message_id, canonical, bare, f"<{bare}>"})


async def process(session: AsyncSession, mailbox: Mailbox, raw: bytes, now: datetime) -> tuple[str, str | None]:
    """Reads one inbound message for a mailbox: (kind, the enrollment it stopped). ``duplicate`` when
    this message was read before."""
    verdict = classify(raw)
    fingerprint = hashlib.sha256((verdict.message_id or "").encode() if verdict.message_id else raw).hexdigest()
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    inserted = await session.execute(
        dialect.insert(InboundMessage)
        .values(mailbox_id=mailbox.id, fingerprint=fingerprint, kind=verdict.kind, created_at=now)
        .on_conflict_do_nothing(index_elements=["mailbox_id", "fingerprint"])
    )
    if not getattr(inserted, "rowcount", 0):
        return "duplicate", None
    if verdict.kind not in ("reply", "bounce"):
        return verdict.kind, None
    sent = await _sent_message(session, mailbox.id, verdict)
    if sent is None:
        return verdict.kind, None
    enrollment = await session.get(Enrollment, sent.enrollment_id, with_for_update=True)
    if enrollment is None:
        return verdict.kind, None
    if verdict.kind == "bounce":
        diagnostic = " ".join(filter(None, [verdict.status, verdict.diagnostic])) or None
        await sending.mark_bounced(session, sent, enrollment, now, diagnostic=diagnostic)
    elif enrollment.status == "active":
        enrollment.status, enrollment.stop_reason, enrollment.next_due_at = "replied", "replied", None
        enrollment.updated_at = now
        await _stop_pending(session, enrollment.id)
        data = {"message_id": sent.message_id, "step": sent.step, "received_at": now, "email": enrollment.email}
        await events.announce(session, enrollment, events.REPLIED, data, now)
    await session.execute(
        update(InboundMessage)
        .where(InboundMessage.mailbox_id == mailbox.id, InboundMessage.fingerprint == fingerprint)
        .values(enrollment_id=enrollment.id)
    )
    return verdict.kind, enrollment.id


async def _sent_message(session: AsyncSession, mailbox_id: str, verdict: InboundVerdict) -> SequenceMessage | None:
    for reference in verdict.refers_to:
        found = await session.scalar(
            select(SequenceMessage).where(
                SequenceMessage.mailbox_id == mailbox_id,
                SequenceMessage.message_id.in_(_forms(reference)),
                SequenceMessage.status.in_(("sent", "transmitting", "bounced")),
            )
        )
        if found is not None:
            return found
    return None


async def _stop_pending(session: AsyncSession, enrollment_id: str) -> None:
    """A stopped enrollment's deferred or unsent message does not go."""
    await session.execute(
        update(SequenceMessage)
        .where(SequenceMessage.enrollment_id == enrollment_id, or_(SequenceMessage.status == "deferred"))
        .values(status="stopped", lease_until=None)
    )


async def poll_mailboxes(database: Database, *, box: SecretBox, settings: Settings, clock: Clock) -> int:
    """Reads, over IMAP, the mailboxes not read for ``imap_poll_seconds``; returns messages read."""
    now = clock.now()
    async with database.read_sessions() as session:
        due = list(
            await session.scalars(
                select(Mailbox).where(
                    Mailbox.imap_host.is_not(None),
                    or_(
                        Mailbox.imap_polled_at.is_(None),
                        Mailbox.imap_polled_at <= now - timedelta(seconds=settings.imap_poll_seconds),
                    ),
                )
            )
        )
    read = 0
    for mailbox in due:
        account = mailbox_service.imap_account(mailbox, box, settings)
        if account is None:
            continue
        try:
            fetched, uidvalidity = await asyncio.to_thread(
                fetch_since, account, after_uid=mailbox.imap_last_uid, uidvalidity=mailbox.imap_uidvalidity
            )
        except ImapError as exc:
            log.warning("reading a mailbox over IMAP failed", extra={"mailbox_id": mailbox.id, "reason": exc.reason})
            async with database.write_sessions() as session, session.begin():
                await session.execute(update(Mailbox).where(Mailbox.id == mailbox.id).values(imap_polled_at=now))
            continue
        async with database.write_sessions() as session, session.begin():
            current = await session.get(Mailbox, mailbox.id, with_for_update=True)
            if current is None:
                continue
            for message in fetched:
                await process(session, current, message.raw, now)
            current.imap_polled_at, current.imap_uidvalidity = now, uidvalidity
            if fetched:
                current.imap_last_uid = max(m.uid for m in fetched)
        read += len(fetched)
    return read
