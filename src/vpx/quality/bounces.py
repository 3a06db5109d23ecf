"""Hard bounces and the refund rules: the sequences record each hard bounce of a contact's email in
the bounce's own transaction (``record_hard_bounce``); the worker reviews them (``review_pending``),
one bounce per transaction, under the contact's lock (vpx.quality.rules):

- the account whose sequence bounced it is refunded the email's share of its reveal when the bounce
  came within 30 days of that reveal (within the monthly limit of refunds, vpx.quality.rules);
- when the bounce is corroborated, the email is marked ``bounced`` for every account
  (vpx.deliverability.service.mark_bounced) and bad, which tells every past buyer once and keeps it
  off later sales, and every open report on that email is confirmed and its reporter refunded.

A customer's own mail server can answer 550 to anything, so one account's bounce proves nothing to
the others. It is corroborated by the MX check (the address's domain takes no mail, or the address
is malformed) or by a bounce of the same address in the sequence of another paying account unrelated
to the first (vpx.quality.trust); until then it refunds only the account that saw it.

A bounce of another address than the contact's email (a decision-maker's, or an email replaced
since) changes nothing here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import Clock
from vpx.config import Settings
from vpx.db import Database
from vpx.deliverability import service as deliverability
from vpx.models import Contact
from vpx.models.quality import SequenceBounce
from vpx.quality import rules, trust
from vpx.quality.fields import value_key
from vpx.webhooks.outbox import wake_workers_on_commit

# Bounces reviewed per round (each in its own transaction).
ROUND = 50
# What the MX check says of an address that takes no mail.
_UNDELIVERABLE = ("no_mx", "invalid_syntax")


async def record_hard_bounce(
    session: AsyncSession, *, account_id: str, contact_id: int, email: str, at: datetime
) -> None:
    """Notes a hard bounce of ``email`` in the account's sequence for the worker's review."""
    session.add(SequenceBounce(account_id=account_id, contact_id=contact_id, email=email[:320], bounced_at=at))
    await session.flush()
    await wake_workers_on_commit(session)


async def review_pending(database: Database, *, settings: Settings, clock: Clock) -> int:
    """Reviews the bounces waiting, oldest first, then those of the last 30 days not corroborated
    when reviewed whose address the MX check has since found dead; how many (0: none)."""
    reviewed = 0
    for waiting in (True, False):
        for _ in range(ROUND):
            async with database.writer_turn(), database.write_sessions() as session, session.begin():
                bounce = await session.scalar(_next(waiting, clock.now()).with_for_update(skip_locked=True))
                if bounce is None:
                    break
                await review_bounce(session, bounce, now=clock.now(), settings=settings)
            reviewed += 1
    return reviewed


def _next(waiting: bool, now: datetime) -> Any:
    query = select(SequenceBounce).order_by(SequenceBounce.id).limit(1)
    if waiting:
        return query.where(SequenceBounce.reviewed_at.is_(None))
    dead = select(Contact.id).where(Contact.id == SequenceBounce.contact_id, Contact.email_status.in_(_UNDELIVERABLE))
    return query.where(
        SequenceBounce.reviewed_at.is_not(None),
        SequenceBounce.corroborated_at.is_(None),
        SequenceBounce.bounced_at >= now - rules.REFUND_WINDOW,
        dead.exists(),
    )


async def review_bounce(session: AsyncSession, bounce: SequenceBounce, *, now: datetime, settings: Settings) -> None:
    """Applies the rules to one bounce (see the module's docstring) and marks it reviewed (and
    corroborated, when it is). Reviewing one again pays nothing twice."""
    bounce.reviewed_at = now
    contact = await rules.lock_contact(session, bounce.contact_id)
    if contact is None or not contact.email or contact.email.strip().casefold() != bounce.email.strip().casefold():
        return
    own: list[rules.Due] = []
    if rules.within_window(await rules.revealed_at(session, bounce.account_id, contact.id), bounce.bounced_at):
        own.append(rules.Due(bounce.account_id, "own_bounce", rules.own_bounce_why(contact)))
    if not await corroborated(session, contact, bounce):
        await rules.refund(session, contact, "email", own, now=now, settings=settings)
        return
    bounce.corroborated_at = now
    await deliverability.mark_bounced(session, contact.id, bounce.bounced_at, email=bounce.email)
    key = value_key(contact.email)
    await rules.mark_bad(session, contact, "email", key, problem="bounced", decided_by=rules.RULE_BOUNCE, now=now)
    await rules.settle_bad_field(
        session, contact, "email", key, actor=rules.RULE_BOUNCE, problem="bounced", also=own, now=now, settings=settings
    )


async def corroborated(session: AsyncSession, contact: Any, bounce: SequenceBounce) -> bool:
    """Whether more than this account's word says the address is dead: the MX check, or a bounce of
    it in an unrelated paying account's sequence."""
    if contact.email_status in _UNDELIVERABLE or contact.email_status == "bounced":
        return True
    accounts = set(
        await session.scalars(
            select(SequenceBounce.account_id).where(
                SequenceBounce.contact_id == contact.id,
                func.lower(SequenceBounce.email) == bounce.email.strip().lower(),
            )
        )
    )
    accounts.add(bounce.account_id)
    if len(accounts) < 2:
        return False
    return trust.independent_pair(list((await trust.accounts_of(session, accounts)).values()))
