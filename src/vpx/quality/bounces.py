"""Hard bounces and the refund rules: the sequences record each hard bounce of a contact's email in
the bounce's own transaction (``record_hard_bounce``); the worker reviews them (``review_pending``),
one bounce per transaction, under the contact's lock (vpx.quality.rules):

- the email is marked ``bounced`` for every account (vpx.deliverability.service.mark_bounced; the
  sequences have usually done so already) and bad, which tells every past buyer once;
- the account whose sequence bounced it is refunded the email's share of its reveal when the bounce
  came within 30 days of that reveal;
- every open report on that email is confirmed and its reporter refunded (a bounce plus a report).

A bounce of another address than the contact's email (a decision-maker's, or an email replaced
since) changes nothing here.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import Clock
from vpx.config import Settings
from vpx.db import Database
from vpx.deliverability import service as deliverability
from vpx.models.quality import SequenceBounce
from vpx.quality import rules
from vpx.quality.fields import value_key
from vpx.webhooks.outbox import wake_workers_on_commit

# Bounces reviewed per round (each in its own transaction).
ROUND = 50


async def record_hard_bounce(
    session: AsyncSession, *, account_id: str, contact_id: int, email: str, at: datetime
) -> None:
    """Notes a hard bounce of ``email`` in the account's sequence for the worker's review."""
    session.add(SequenceBounce(account_id=account_id, contact_id=contact_id, email=email[:320], bounced_at=at))
    await session.flush()
    await wake_workers_on_commit(session)


async def review_pending(database: Database, *, settings: Settings, clock: Clock) -> int:
    """Reviews the bounces waiting, oldest first; how many (0: none waited)."""
    reviewed = 0
    for _ in range(ROUND):
        async with database.writer_turn(), database.write_sessions() as session, session.begin():
            bounce = await session.scalar(
                select(SequenceBounce)
                .where(SequenceBounce.reviewed_at.is_(None))
                .order_by(SequenceBounce.id)
                .limit(1)
                .with_for_update(skip_locked=True)
            )
            if bounce is None:
                break
            await review_bounce(session, bounce, now=clock.now(), settings=settings)
        reviewed += 1
    return reviewed


async def review_bounce(session: AsyncSession, bounce: SequenceBounce, *, now: datetime, settings: Settings) -> None:
    """Applies the rules to one bounce (see the module's docstring) and marks it reviewed."""
    bounce.reviewed_at = now
    contact = await rules.lock_contact(session, bounce.contact_id)
    if contact is None or not contact.email or contact.email.strip().casefold() != bounce.email.strip().casefold():
        return
    await deliverability.mark_bounced(session, contact.id, bounce.bounced_at, email=bounce.email)
    key = value_key(contact.email)
    await rules.mark_bad(session, contact, "email", key, problem="bounced", decided_by=rules.RULE_BOUNCE, now=now)
    own: list[rules.Due] = []
    if rules.within_window(await rules.revealed_at(session, bounce.account_id, contact.id), bounce.bounced_at):
        own.append(rules.Due(bounce.account_id, "own_bounce", rules.own_bounce_why(contact)))
    await rules.settle_bad_field(
        session, contact, "email", key, actor=rules.RULE_BOUNCE, problem="bounced", also=own, now=now, settings=settings
    )
