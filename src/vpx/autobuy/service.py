"""Managing auto-buy rules (D24): create, read, update, pause, resume, delete, and their purchases.

A rule's (vertical, state) keys are kept in ``auto_buy_rule_keys`` while, and only while, the rule is
active: matching reads that index (``matching``), so pausing or deleting a rule stops its purchases in
the same transaction.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_DOWN, Decimal
from typing import Any

from sqlalchemy import and_, delete, func, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.accounts import caps
from vpx.autobuy.schemas import PurchasePage, PurchaseView, RuleCreate, RuleUpdate, RuleView
from vpx.config import Settings
from vpx.contacts import pricing
from vpx.contacts.service import contact_public_id
from vpx.cursors import decode_cursor, decode_keyed_cursor, encode_cursor, encode_keyed_cursor
from vpx.errors import Conflict, NotFound
from vpx.ids import new_id, public_number_id
from vpx.models import AutoBuyPurchase, AutoBuyRule, AutoBuyRuleKey, Signal
from vpx.money import QUANTUM
from vpx.signals import service as signal_service

PURCHASE_CURSOR = "abp"
RULE_CURSOR = "abr"
# An account's rules (deleted ones aside), at most, as its webhooks are capped; the rule list's default
# page holds them all.
MAX_RULES_PER_ACCOUNT = 100
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Never hand the database an id this service could not have issued.
RULE_ID = re.compile(r"^abr_[0-9A-Za-z]{1,28}$")
PAUSED_BY_ACCOUNT = "paused by the account"
KEPT_WHEN_NULL = ("name", "industries", "states", "min_confidence")


def cheapest_price(settings: Settings) -> Decimal:
    """The least a contact with anything to sell costs: one field of four at the cheapest tier's price
    (D9 and docs/decisions.md "What a reveal costs"). A rule with less budget left can buy nothing."""
    tiers = (settings.price_default, settings.price_cold, settings.price_warm, settings.price_hot)
    return (min(tiers) / pricing.FIELD_COUNT).quantize(QUANTUM, rounding=ROUND_DOWN)


def budget_remaining(rule: AutoBuyRule) -> Decimal | None:
    return None if rule.budget_credits is None else max(rule.budget_credits - rule.spent_total, Decimal(0))


def budget_spent(rule: AutoBuyRule, settings: Settings) -> bool:
    remaining = budget_remaining(rule)
    return remaining is not None and remaining < cheapest_price(settings)


def today_of(now: datetime) -> date:
    return now.date()  # `now` is UTC throughout the service: the cap's day is the UTC day (D24)


def view(rule: AutoBuyRule, *, now: datetime) -> RuleView:
    current = rule.spent_day == today_of(now)
    return RuleView(
        id=rule.id,
        name=rule.name,
        industries=list(rule.industries),
        states=list(rule.states),
        min_confidence=rule.min_confidence,
        categories=list(rule.categories) or None,
        intent_levels=list(rule.intent_levels) or None,
        budget_credits=rule.budget_credits,
        daily_cap=rule.daily_cap,
        exclude_dnc=rule.exclude_dnc,
        status="active" if rule.status == "active" else "paused",
        paused_reason=rule.paused_reason,
        spent_today=rule.spent_today if current else Decimal(0),
        purchases_today=rule.purchases_today if current else 0,
        spent_total=rule.spent_total,
        purchases_total=rule.purchases_total,
        budget_remaining=budget_remaining(rule),
        created_at=rule.created_at,
        updated_at=rule.updated_at,
    )


async def write_keys(session: AsyncSession, rule: AutoBuyRule) -> None:
    await session.execute(delete(AutoBuyRuleKey).where(AutoBuyRuleKey.rule_id == rule.id))
    if rule.status == "active":
        rows = [{"rule_id": rule.id, "industry": i, "state": s} for i in rule.industries for s in rule.states]
        await session.execute(insert(AutoBuyRuleKey), rows)


async def create_rule(session: AsyncSession, *, account_id: str, body: RuleCreate, now: datetime) -> AutoBuyRule:
    """A new active rule; a 409 once the account has ``MAX_RULES_PER_ACCOUNT`` (deleted ones do not count)."""
    await caps.count_in_turn(session, account_id)  # two creations at once count one after the other
    count = await session.scalar(
        select(func.count())
        .select_from(AutoBuyRule)
        .where(AutoBuyRule.account_id == account_id, AutoBuyRule.status != "deleted")
    )
    if (count or 0) >= MAX_RULES_PER_ACCOUNT:
        raise Conflict(
            f"An account may have at most {MAX_RULES_PER_ACCOUNT} auto-buy rules; delete one first "
            "(a paused rule still counts)."
        )
    rule = AutoBuyRule(
        id=new_id("abr"),
        account_id=account_id,
        name=body.name,
        industries=list(body.industries),
        states=list(body.states),
        min_confidence=body.min_confidence,
        categories=list(body.categories or []),
        intent_levels=list(body.intent_levels or []),
        budget_credits=body.budget_credits,
        daily_cap=body.daily_cap,
        exclude_dnc=body.exclude_dnc,
        status="active",
        paused_reason=None,
        spent_total=Decimal(0),
        purchases_total=0,
        spent_day=None,
        spent_today=Decimal(0),
        purchases_today=0,
        created_at=now,
        updated_at=now,
    )
    session.add(rule)
    await session.flush()
    await write_keys(session, rule)
    return rule


async def list_rules(session: AsyncSession, *, account_id: str) -> list[AutoBuyRule]:
    """Every rule of the account (at most ``MAX_RULES_PER_ACCOUNT``), oldest first."""
    rows, _ = await page_rules(session, account_id=account_id, limit=MAX_RULES_PER_ACCOUNT, cursor=None)
    return rows


async def page_rules(
    session: AsyncSession, *, account_id: str, limit: int, cursor: str | None
) -> tuple[list[AutoBuyRule], str | None]:
    """A page of the account's rules, oldest first (ties by id), and the next page's cursor or None."""
    statement = (
        select(AutoBuyRule)
        .where(AutoBuyRule.account_id == account_id, AutoBuyRule.status != "deleted")
        .order_by(AutoBuyRule.created_at, AutoBuyRule.id)
        .limit(limit + 1)
    )
    if cursor is not None:
        micros, last_id = decode_keyed_cursor(cursor, RULE_CURSOR)
        at = EPOCH + timedelta(microseconds=micros)
        statement = statement.where(
            or_(AutoBuyRule.created_at > at, and_(AutoBuyRule.created_at == at, AutoBuyRule.id > last_id))
        )
    rows = list(await session.scalars(statement))
    if len(rows) <= limit:
        return rows, None
    last = rows[limit - 1]
    return rows[:limit], encode_keyed_cursor(
        RULE_CURSOR, (last.created_at - EPOCH) // timedelta(microseconds=1), last.id
    )


async def get_rule(session: AsyncSession, *, account_id: str, rule_id: str, lock: bool = False) -> AutoBuyRule:
    """The account's rule; 404 for unknown ids, deleted rules and other accounts' rules (D2)."""
    rule: AutoBuyRule | None = None
    if RULE_ID.match(rule_id):
        statement = select(AutoBuyRule).where(AutoBuyRule.id == rule_id)
        if lock and session.get_bind().dialect.name == "postgresql":
            # The matcher locks the rule row too: an update waits for an ingest's purchases, and the
            # other way round, so a budget is never read half-changed.
            statement = statement.with_for_update()
        rule = await session.scalar(statement.execution_options(populate_existing=True))
    if rule is None or rule.account_id != account_id or rule.status == "deleted":
        raise NotFound(f"No auto-buy rule {rule_id}.")
    return rule


async def update_rule(
    session: AsyncSession, *, account_id: str, rule_id: str, body: RuleUpdate, now: datetime, settings: Settings
) -> AutoBuyRule:
    # Null for a field the rule cannot be without (or for the name) leaves it as it is.
    given = {name for name in body.model_fields_set if name not in KEPT_WHEN_NULL or getattr(body, name) is not None}
    rule = await get_rule(session, account_id=account_id, rule_id=rule_id, lock=True)
    changes: dict[str, Any] = body.model_dump(include=given)
    if "name" in changes:
        rule.name = changes["name"] or ""
    for name in ("industries", "states", "categories", "intent_levels"):
        if name in changes:
            setattr(rule, name, list(changes[name] or []))
    if "min_confidence" in changes:
        rule.min_confidence = changes["min_confidence"]
    if "budget_credits" in changes:
        rule.budget_credits = body.budget_credits
    if "daily_cap" in changes:
        rule.daily_cap = changes["daily_cap"]
    if changes.get("exclude_dnc") is not None:
        rule.exclude_dnc = changes["exclude_dnc"]
    if rule.status == "active" and budget_spent(rule, settings):
        pause_for_budget(rule, settings)
    rule.updated_at = now
    await session.flush()
    await write_keys(session, rule)
    return rule


def pause_for_budget(rule: AutoBuyRule, settings: Settings) -> None:
    rule.status = "paused"
    rule.paused_reason = (
        f"budget spent: {rule.spent_total.normalize():f} of {(rule.budget_credits or Decimal(0)).normalize():f} "
        f"credits (less than the cheapest contact, {cheapest_price(settings).normalize():f}, is left)"
    )


async def pause_rule(session: AsyncSession, *, account_id: str, rule_id: str, now: datetime) -> AutoBuyRule:
    rule = await get_rule(session, account_id=account_id, rule_id=rule_id, lock=True)
    if rule.status == "active":
        rule.status, rule.paused_reason, rule.updated_at = "paused", PAUSED_BY_ACCOUNT, now
        await session.flush()
        await write_keys(session, rule)
    return rule


async def resume_rule(
    session: AsyncSession, *, account_id: str, rule_id: str, now: datetime, settings: Settings
) -> AutoBuyRule:
    rule = await get_rule(session, account_id=account_id, rule_id=rule_id, lock=True)
    if rule.status == "paused":
        if budget_spent(rule, settings):
            raise Conflict(
                f"Rule {rule.id} has spent its budget ({rule.spent_total.normalize():f} credits); "
                "raise budget_credits or remove it (PATCH) before resuming."
            )
        rule.status, rule.paused_reason, rule.updated_at = "active", None, now
        await session.flush()
        await write_keys(session, rule)
    return rule


async def delete_rule(session: AsyncSession, *, account_id: str, rule_id: str, now: datetime) -> None:
    """Stops the rule for good. The row stays, marked deleted, so its purchases keep naming it."""
    rule = await get_rule(session, account_id=account_id, rule_id=rule_id, lock=True)
    rule.status, rule.paused_reason, rule.updated_at = "deleted", "deleted by the account", now
    await session.flush()
    await write_keys(session, rule)


async def list_purchases(
    session: AsyncSession,
    *,
    account_id: str,
    rule_id: str | None,
    limit: int,
    cursor: str | None,
    settings: Settings,
) -> PurchasePage:
    """Newest first; the cursor holds the last purchase number shown (D22-style pages)."""
    statement = select(AutoBuyPurchase).where(AutoBuyPurchase.account_id == account_id)
    if rule_id is not None:
        statement = statement.where(AutoBuyPurchase.rule_id == rule_id)
    if cursor is not None:
        statement = statement.where(AutoBuyPurchase.id < decode_cursor(cursor, PURCHASE_CURSOR))
    rows = list(await session.scalars(statement.order_by(AutoBuyPurchase.id.desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    signals = {
        s.id: s for s in await session.scalars(select(Signal).where(Signal.id.in_(sorted({r.signal_id for r in rows}))))
    }
    views = {v.id: v for v in await signal_service.views_of(session, list(signals.values()), settings)}
    return PurchasePage(
        purchases=[
            PurchaseView(
                id=public_number_id(PURCHASE_CURSOR, row.id),
                rule_id=row.rule_id,
                signal_id=row.signal_id,
                contact_id=contact_public_id(row.contact_id),
                credits_charged=row.credits_charged,
                created_at=row.created_at,
                signal=views.get(row.signal_id),
            )
            for row in rows
        ],
        limit=limit,
        next_cursor=encode_cursor(PURCHASE_CURSOR, rows[-1].id) if more and rows else None,
    )
