"""What a send came to: the server's answer recorded (sent, deferred and tried again, bounced), a
mailbox paused past its bounce rate, and the doubt a crash leaves settled: ``sending`` goes again,
``transmitting`` is looked for in the mailbox's Sent folder over IMAP (taken as sent without IMAP)."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import Clock
from vpx.config import Settings
from vpx.db import Database
from vpx.deliverability import service as deliverability
from vpx.mailboxes import service as mailbox_service
from vpx.mailboxes.imap import ImapError, find_message_id
from vpx.models import (
    Enrollment,
    Mailbox,
    SequenceMessage,
)
from vpx.quality import bounces as quality_bounces
from vpx.secrets import SecretBox
from vpx.sequences import events
from vpx.sequences.sending.claiming import BATCH, Claimed
from vpx.sequences.sending.steps import advance, enrollment_version

log = logging.getLogger("vpx.sequences")
# Waits before the 2nd … 5th try of a message a server deferred (4xx): five tries over about 24 hours.
RETRY_DELAYS = (timedelta(minutes=5), timedelta(minutes=30), timedelta(hours=3), timedelta(hours=20))
BOUNCE_WINDOW, BOUNCE_MIN, BOUNCE_RATE = 40, 10, 0.05


async def stop_enrollment(session: AsyncSession, item: Claimed, *, reason: str, detail: str, now: datetime) -> None:
    await session.execute(
        update(SequenceMessage)
        .where(SequenceMessage.id == item.message_id)
        .values(status="stopped", lease_until=None, last_reply=detail[:1000])
    )
    enrollment = await session.get(Enrollment, item.enrollment_id)
    if enrollment is not None and enrollment.status == "active":
        enrollment.status, enrollment.stop_reason, enrollment.next_due_at = "stopped", reason, None
        enrollment.updated_at = now


async def record_outcome(
    session: AsyncSession, item: Claimed, status: str, code: int | None, reply: str, now: datetime
) -> None:
    """What the server answered: sent (the enrollment moves on), bounced (it ends), deferred (later)."""
    message = await session.get(SequenceMessage, item.message_id, with_for_update=True)
    enrollment = await session.get(Enrollment, item.enrollment_id, with_for_update=True)
    if message is None or enrollment is None or message.status not in ("sending", "transmitting"):
        return
    message.lease_until, message.last_reply = None, f"{code or ''} {reply}".strip()[:1000]
    if status == "accepted":
        await mark_sent(session, message, enrollment, now)
    elif status == "rejected" or message.attempts >= len(RETRY_DELAYS) + 1:
        await mark_bounced(session, message, enrollment, now, diagnostic=message.last_reply)
    else:
        message.status = "deferred"
        message.next_attempt_at = now + RETRY_DELAYS[max(0, min(message.attempts, len(RETRY_DELAYS)) - 1)]


async def mark_sent(session: AsyncSession, message: SequenceMessage, enrollment: Enrollment, now: datetime) -> None:
    message.status, message.sent_at = "sent", now
    if message.step == 0 or enrollment.thread_message_id is None:
        enrollment.thread_message_id = message.message_id
    data = {"step": message.step, "message_id": message.message_id, "sent_at": now, "email": enrollment.email}
    await events.announce(session, enrollment, events.STEP_SENT, data, now)
    # Every send moves the window of the last 40: an early bounce weighs until enough go through.
    await check_bounce_rate(session, message.mailbox_id, now)
    if enrollment.status == "active":
        await advance(session, enrollment, await enrollment_version(session, enrollment), now, after=now)


async def mark_bounced(
    session: AsyncSession, message: SequenceMessage, enrollment: Enrollment, now: datetime, *, diagnostic: str | None
) -> None:
    message.status, message.lease_until = "bounced", None
    if enrollment.status == "active":
        enrollment.status, enrollment.stop_reason, enrollment.next_due_at = "bounced", "bounced", None
        enrollment.updated_at = now
    data = {"step": message.step, "message_id": message.message_id, "email": enrollment.email, "diagnostic": diagnostic}
    await events.announce(session, enrollment, events.BOUNCED, data, now)
    # D34: a hard bounce (the address itself refused for good, not a full mailbox or a spam filter) is
    # recorded for the worker (vpx.quality.bounces): it refunds this account, and marks the contact's
    # email bounced for every account once something besides this account's own mail server agrees.
    if deliverability.is_hard_bounce(diagnostic):
        await quality_bounces.record_hard_bounce(
            session, account_id=enrollment.account_id, contact_id=enrollment.contact_id, email=enrollment.email, at=now
        )
    await check_bounce_rate(session, message.mailbox_id, now)


async def check_bounce_rate(session: AsyncSession, mailbox_id: str, now: datetime) -> None:
    """Past 5 % bounced over the mailbox's last 40 sends (at least 10 of them), it pauses."""
    last = list(
        await session.scalars(
            select(SequenceMessage.status)
            .where(SequenceMessage.mailbox_id == mailbox_id, SequenceMessage.status.in_(("sent", "bounced")))
            .order_by(SequenceMessage.id.desc())
            .limit(BOUNCE_WINDOW)
        )
    )
    bounced = sum(s == "bounced" for s in last)
    if len(last) >= BOUNCE_MIN and bounced / len(last) > BOUNCE_RATE:
        rate = f"bounce_rate: {bounced} of the last {len(last)} sends bounced"
        await pause_mailbox(session, mailbox_id, rate, now)


async def pause_mailbox(session: AsyncSession, mailbox_id: str, reason: str, now: datetime) -> None:
    await session.execute(
        update(Mailbox)
        .where(Mailbox.id == mailbox_id, Mailbox.status == "active")
        .values(status="paused", pause_reason=reason, updated_at=now)
    )
    await mailbox_service.pause_sequences_of(session, mailbox_id, reason=f"mailbox paused: {reason}"[:200], now=now)


async def settle_interrupted(database: Database, *, box: SecretBox, settings: Settings, clock: Clock) -> int:
    """Messages whose worker died mid-send (their lease ran out): ``sending`` ones go again;
    ``transmitting`` ones are settled by the Sent folder when the mailbox has IMAP, else taken as sent."""
    now = clock.now()
    async with database.read_sessions() as session:
        stale = list(
            (
                await session.execute(
                    select(SequenceMessage, Mailbox)
                    .join(Mailbox, Mailbox.id == SequenceMessage.mailbox_id)
                    .where(SequenceMessage.status.in_(("sending", "transmitting")), SequenceMessage.lease_until <= now)
                    .limit(BATCH)
                )
            ).all()
        )
    for message, mailbox in stale:
        item = Claimed(message.id, message.enrollment_id, mailbox.id)
        verdict = "again"
        if message.status == "transmitting":
            verdict = "sent"
            account = mailbox_service.imap_account(mailbox, box, settings)
            if account is not None and message.message_id:
                try:
                    found = await asyncio.to_thread(find_message_id, account, message.message_id)
                except ImapError as exc:
                    log.warning("could not settle an interrupted send over IMAP", extra={"reason": exc.reason})
                    continue  # asked again next round
                verdict = "sent" if found else "again"
        async with database.write_sessions() as session, session.begin():
            row = await session.get(SequenceMessage, item.message_id, with_for_update=True)
            if row is None or row.status not in ("sending", "transmitting") or (row.lease_until or now) > now:
                continue
            if verdict == "sent":
                await record_outcome(session, item, "accepted", None, "settled after an interruption", now)
            else:
                row.status, row.next_attempt_at, row.lease_until = "deferred", now, None
    return len(stale)
