"""The refund rules (docs/decisions.md, "Refunds when data proves wrong"), applied in the caller's
transaction: a report's request, the operator's confirmation, or the worker's review of a bounce.

A field's value is bad when two independent paying accounts report it (vpx.quality.trust), when it
is an email whose hard bounce was corroborated (vpx.quality.bounces), or when the operator confirms a
report of it. Then every open report on that value is confirmed, every reporter refunded its share of
the reveal (vpx.quality.fields.field_share), every account that revealed the contact told once
(``contact.corrected``), and the value is neither shown nor charged for in later reveals
(``contacts.bad_fields``). A buyer whose own sequence bounced the email within 30 days of its reveal
is refunded too, report or not.

A refund goes back to the pools the reveal was paid from (free credits stay free and expire with
their month; a share paid with free credits of a month gone by is not given back), and the rules
refund an account at most ``VPX_REFUND_MONTHLY_CAP`` credits a UTC month (the operator's
confirmations are not limited).

One contact at a time: each of these transactions first locks the contact's row (PostgreSQL: FOR NO
KEY UPDATE, which reveals of the contact do not wait for; SQLite's write transaction holds the whole
database), so concurrent reports and bounces of one contact take turns. The unique (account,
contact, field) of ``data_refunds`` backs it: a reveal is refunded at most once per field, and never
more in all than it cost (D11: balances change only through vpx.credits.service, accounts locked in
id order first, as every transaction that changes several balances does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_DOWN, Decimal
from typing import Any

from sqlalchemy import Table, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import month_key, month_start
from vpx.config import Settings
from vpx.contacts import pricing
from vpx.contacts.reveal import lock_accounts
from vpx.credits import service as credit_service
from vpx.db import insert_unless_exists
from vpx.ids import public_number_id
from vpx.models import Contact, Reveal
from vpx.models.quality import BadField, ContactReport, DataRefund, ReportAction
from vpx.money import QUANTUM
from vpx.quality import corrections, trust
from vpx.quality.fields import COLUMNS, field_share, field_values, value_key

# A bounce in the buyer's own sequence refunds its reveal within this long of it.
REFUND_WINDOW = timedelta(days=30)
RULE_TWO_ACCOUNTS = "rule:two_accounts"
RULE_BOUNCE = "rule:bounce"
RULE_FIELD_BAD = "rule:field_bad"
_contacts: Table = Contact.__table__  # type: ignore[assignment]
_SHOWN = {
    "bounced": "to bounce",
    "wrong": "wrong",
    "disconnected": "disconnected",
    "closed_business": "out of date (the business closed)",
}


async def lock_contact(session: AsyncSession, contact_id: int) -> Any | None:
    """The contact's name and reportable fields, its row locked until the transaction ends; None
    when there is no such contact."""
    statement = select(_contacts.c.id, _contacts.c.business_name, *(_contacts.c[name] for name in COLUMNS)).where(
        _contacts.c.id == contact_id
    )
    if session.get_bind().dialect.name == "postgresql":
        statement = statement.with_for_update(key_share=True)
    return (await session.execute(statement)).one_or_none()


def current_key(contact: Any, field: str) -> str | None:
    value = field_values(contact)[field]
    return None if value is None else value_key(value)


def _bounced(contact: Any, field: str, key: str) -> bool:
    return field == "email" and contact.email_status == "bounced" and current_key(contact, field) == key


async def bad_mark(session: AsyncSession, contact: Any, field: str, key: str) -> BadField | None:
    return await session.scalar(
        select(BadField).where(BadField.contact_id == contact.id, BadField.field == field, BadField.value_key == key)
    )


async def mark_bad(
    session: AsyncSession, contact: Any, field: str, key: str, *, problem: str, decided_by: str, now: datetime
) -> bool:
    """Marks the value bad; the first time (True) every past buyer is told, when it is still the
    contact's value (an operator may confirm a report on a value since replaced)."""
    inserted = await session.execute(
        insert_unless_exists(session, BadField)
        .values(
            contact_id=contact.id, field=field, value_key=key, problem=problem, decided_by=decided_by, created_at=now
        )
        .returning(BadField.id)
    )
    if inserted.scalar() is None:
        return False
    if current_key(contact, field) == key:
        # Later reveals neither show nor charge for it (cleared by trigger when the value changes).
        bit = pricing.FIELD_BITS[field]
        await session.execute(
            update(_contacts).where(_contacts.c.id == contact.id).values(bad_fields=_contacts.c.bad_fields.op("|")(bit))
        )
        await corrections.announce(
            session, contact_id=contact.id, fields=[field], change="marked_bad", reason=problem, now=now
        )
    return True


@dataclass(frozen=True)
class Due:
    """A refund owed to an account for a field, and the words of its ledger entry."""

    account_id: str
    reason: str  # own_bounce, bounce, reports or operator
    why: str
    report_id: int | None = None


def _refund_reason(actor: str) -> str:
    if actor == RULE_BOUNCE:
        return "bounce"
    return "reports" if actor.startswith("rule:") else "operator"


def report_why(contact: Any, field: str, problem: str, actor: str) -> str:
    public_id = public_number_id("ct", contact.id)
    found = (
        f"the {field} of {public_id} ({contact.business_name}) you reported was found {_SHOWN.get(problem, problem)}"
    )
    if actor == RULE_TWO_ACCOUNTS:
        return f"{found}, reported by more than one buyer"
    if not actor.startswith("rule:"):
        return f"{found}, confirmed by the operator"
    return found


def own_bounce_why(contact: Any) -> str:
    public_id = public_number_id("ct", contact.id)
    return f"the email of {public_id} ({contact.business_name}) bounced in your sequence within 30 days of your reveal"


async def settle_bad_field(
    session: AsyncSession,
    contact: Any,
    field: str,
    key: str,
    *,
    actor: str,
    problem: str,
    decided_by: str | None = None,
    also: Sequence[Due] = (),
    now: datetime,
    settings: Settings,
) -> dict[str, Decimal]:
    """The value is bad: its open reports confirmed by ``actor``, each reporter (and ``also``)
    refunded, in words that say how it was found bad (``decided_by``, by default ``actor``). What
    each account was paid."""
    decided_by = decided_by or actor
    reports = list(
        await session.scalars(
            select(ContactReport)
            .where(
                ContactReport.contact_id == contact.id,
                ContactReport.field == field,
                ContactReport.value_key == key,
                ContactReport.status == "open",
            )
            .order_by(ContactReport.id)
        )
    )
    dues = list(also)
    for report in reports:
        report.status, report.resolved_at = "confirmed", now
        session.add(ReportAction(report_id=report.id, action="confirmed", actor=actor, note="", at=now))
        why = report_why(contact, field, problem, decided_by)
        dues.append(Due(report.account_id, _refund_reason(decided_by), why, report.id))
    return await refund(session, contact, field, dues, now=now, settings=settings)


async def refund(
    session: AsyncSession, contact: Any, field: str, dues: Sequence[Due], *, now: datetime, settings: Settings
) -> dict[str, Decimal]:
    """Pays the refunds not paid before (one per account and field), accounts locked in id order."""
    if not dues:
        return {}
    await lock_accounts(session, [due.account_id for due in dues])
    paid: dict[str, Decimal] = {}
    for due in sorted(dues, key=lambda d: d.account_id):
        if due.account_id not in paid:
            paid[due.account_id] = await _refund_one(session, contact, field, due, now=now, settings=settings)
    return paid


async def _refund_one(
    session: AsyncSession, contact: Any, field: str, due: Due, *, now: datetime, settings: Settings
) -> Decimal:
    reveal = (
        await session.execute(
            select(Reveal.credits_charged, Reveal.free_spent, Reveal.fields_sold, Reveal.created_at).where(
                Reveal.account_id == due.account_id, Reveal.contact_id == contact.id
            )
        )
    ).one_or_none()
    if reveal is None or reveal.credits_charged <= 0:
        return Decimal(0)
    price = reveal.credits_charged
    earlier = (
        await session.execute(
            select(DataRefund.field, DataRefund.credits, DataRefund.withheld).where(
                DataRefund.account_id == due.account_id, DataRefund.contact_id == contact.id
            )
        )
    ).all()
    if any(row.field == field for row in earlier):
        return Decimal(0)
    if reveal.fields_sold is None:  # sold before reveals kept their fields: every field the contact had
        share = field_share(price, field_values(contact))
    elif reveal.fields_sold & pricing.FIELD_BITS[field]:
        share = (price / pricing.count(reveal.fields_sold)).quantize(QUANTUM, rounding=ROUND_DOWN)
    else:
        return Decimal(0)  # not part of that reveal: nothing was paid for it
    # Never past what the reveal cost, however the contact's fields changed between refunds.
    amount = min(share, price - sum((row.credits + row.withheld for row in earlier), Decimal(0)))
    if amount <= 0:
        return Decimal(0)
    paying, withheld_reason = amount, None
    if due.reason != "operator":
        room = max(settings.refund_monthly_cap - await refunded_this_month(session, due.account_id, now), Decimal(0))
        if room < amount:
            paying, withheld_reason = room, "monthly_limit"
    # Back to the pools the reveal was paid from: free credits stay free, and expire with their month.
    free = (paying * reveal.free_spent / price).quantize(QUANTUM, rounding=ROUND_DOWN)
    if free > 0 and month_key(reveal.created_at) != month_key(now):
        paying, free = paying - free, Decimal(0)
        withheld_reason = withheld_reason or "free_credits_expired"
    inserted = await session.execute(
        insert_unless_exists(session, DataRefund)
        .values(
            account_id=due.account_id,
            contact_id=contact.id,
            field=field,
            credits=paying,
            withheld=amount - paying,
            withheld_reason=withheld_reason,
            reason=due.reason,
            report_id=due.report_id,
            created_at=now,
        )
        .returning(DataRefund.id)
    )
    if inserted.scalar() is None or paying <= 0:
        return Decimal(0)
    await credit_service.give_back(
        session,
        account_id=due.account_id,
        free=free,
        paid=paying - free,
        kind="refund",
        reference=public_number_id("ct", contact.id),
        description=f"Refund: {due.why}"[:500],
        now=now,
        settings=settings,
    )
    returned: Decimal = paying
    return returned


async def refunded_this_month(session: AsyncSession, account_id: str, now: datetime) -> Decimal:
    """What the rules refunded the account since the UTC month began (the operator's not counted)."""
    found = await session.scalar(
        select(func.coalesce(func.sum(DataRefund.credits), 0)).where(
            DataRefund.account_id == account_id,
            DataRefund.reason != "operator",
            DataRefund.created_at >= month_start(now),
        )
    )
    return found if isinstance(found, Decimal) else Decimal(0)


async def review_reports(
    session: AsyncSession, contact: Any, field: str, key: str, *, now: datetime, settings: Settings
) -> None:
    """The rule on reports: a value already bad (found so before, or an email that bounced) settles
    at once; else two accounts' reports (open or confirmed) of the same value make it bad."""
    mark = await bad_mark(session, contact, field, key)
    if mark is not None:
        await settle_bad_field(
            session,
            contact,
            field,
            key,
            actor=RULE_FIELD_BAD,
            problem=mark.problem,
            decided_by=mark.decided_by,
            now=now,
            settings=settings,
        )
        return
    if _bounced(contact, field, key):
        await mark_bad(session, contact, field, key, problem="bounced", decided_by=RULE_BOUNCE, now=now)
        await settle_bad_field(
            session, contact, field, key, actor=RULE_BOUNCE, problem="bounced", now=now, settings=settings
        )
        return
    reports = (
        await session.execute(
            select(ContactReport.account_id, ContactReport.problem, ContactReport.network_key)
            .where(
                ContactReport.contact_id == contact.id,
                ContactReport.field == field,
                ContactReport.value_key == key,
                ContactReport.status.in_(("open", "confirmed")),
            )
            .order_by(ContactReport.id)
        )
    ).all()
    # Only paying accounts unrelated to each other confirm each other (vpx.quality.trust): the others
    # wait for the operator, or for the value to be found bad another way.
    standing = await trust.accounts_of(session, [r.account_id for r in reports])
    witnesses = [
        trust.Witness(r.account_id, standing[r.account_id].paid, standing[r.account_id].domain, r.network_key)
        for r in reports
        if r.account_id in standing
    ]
    if not trust.independent_pair(witnesses):
        return
    problem = reports[0].problem  # the first report's words
    await mark_bad(session, contact, field, key, problem=problem, decided_by=RULE_TWO_ACCOUNTS, now=now)
    await settle_bad_field(
        session, contact, field, key, actor=RULE_TWO_ACCOUNTS, problem=problem, now=now, settings=settings
    )


async def revealed_at(session: AsyncSession, account_id: str, contact_id: int) -> datetime | None:
    found: datetime | None = await session.scalar(
        select(Reveal.created_at).where(Reveal.account_id == account_id, Reveal.contact_id == contact_id)
    )
    return found


def within_window(revealed: datetime | None, bounced: datetime) -> bool:
    return revealed is not None and revealed <= bounced <= revealed + REFUND_WINDOW
