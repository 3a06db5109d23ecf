"""The auto-buy ingest hook (D24): new available signals bought for the rules they match.

Runs inside the ingest transaction, after the signals are flushed and their contacts' intent levels
raised (so the D9 price is the new one). Finding the rules is one lookup in the (vertical, state)
index of active rules, whatever their number. Then, with the matched rules' rows and every account
involved locked in id order (PostgreSQL; SQLite's single writer serialises anyway), each purchase is
the ordinary reveal (suppression first, D15; the D9 price; charge once, D10; the ledger, D11), never
past the rule's budget, its daily cap or the account's balance.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING

from sqlalchemy import select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.autobuy import service as rule_service
from vpx.compliance.dnc import service as dnc_service
from vpx.contacts import service as contact_service
from vpx.errors import InsufficientCredits, NotFound, Suppressed
from vpx.models import Account, AutoBuyPurchase, AutoBuyRule, AutoBuyRuleKey, Contact
from vpx.signals.records import SignalRecord
from vpx.webhooks import events as webhook_events
from vpx.webhooks import outbox as webhook_outbox

if TYPE_CHECKING:
    from vpx.signals.hook_context import HookContext

LEDGER_KIND = "auto_buy"


def rule_wants(rule: AutoBuyRule, signal: SignalRecord) -> bool:
    """Everything but vertical and state, which the index already matched."""
    return rule.status == "active" and _passes(rule.min_confidence, rule.categories, rule.intent_levels, signal)


def _passes(min_confidence: float, categories: list[str], intent_levels: list[str], signal: SignalRecord) -> bool:
    return (
        signal.confidence >= min_confidence
        and (not categories or signal.category in categories)
        and (not intent_levels or signal.intent_level in intent_levels)
    )


async def wanted_by_rule(session: AsyncSession, signals: Sequence[SignalRecord]) -> dict[str, list[SignalRecord]]:
    """The signals each active rule wants: one indexed lookup of the batch's (vertical, state) pairs,
    reading only the filter columns, then the filters in memory. Nothing is locked yet."""
    by_pair: dict[tuple[str, str], list[SignalRecord]] = {}
    for signal in signals:
        by_pair.setdefault((signal.industry, signal.state), []).append(signal)
    pairs = sorted(by_pair)
    wanted: dict[str, list[SignalRecord]] = {}
    for start in range(0, len(pairs), 400):
        rows = await session.execute(
            select(
                AutoBuyRuleKey.industry,
                AutoBuyRuleKey.state,
                AutoBuyRule.id,
                AutoBuyRule.min_confidence,
                AutoBuyRule.categories,
                AutoBuyRule.intent_levels,
            )
            .join(AutoBuyRule, AutoBuyRule.id == AutoBuyRuleKey.rule_id)
            .join(Account, Account.id == AutoBuyRule.account_id)
            .where(
                tuple_(AutoBuyRuleKey.industry, AutoBuyRuleKey.state).in_(pairs[start : start + 400]),
                Account.status == "active",  # a suspended account's rules stop
            )
        )
        for industry, state, rule_id, min_confidence, categories, intent_levels in rows:
            for signal in by_pair[(industry, state)]:
                if _passes(min_confidence, categories or [], intent_levels or [], signal):
                    wanted.setdefault(rule_id, []).append(signal)
    return wanted


async def buy_matching_contacts(session: AsyncSession, signals: Sequence[SignalRecord], context: HookContext) -> None:
    # D19/D21: an fcra_blocked signal has no contact and is never bought; unlinked signals neither.
    available = [s for s in signals if s.source_status == "available" and s.contact_id is not None]
    if not available:
        return
    wanted = await wanted_by_rule(session, available)
    if not wanted:
        return
    # Only the rules that want something are locked and loaded, in id order (PostgreSQL), and checked
    # again: a rule paused or changed since the lookup above is seen as it is now.
    statement = select(AutoBuyRule).where(AutoBuyRule.id.in_(sorted(wanted))).order_by(AutoBuyRule.id)
    if context.dialect == "postgresql":
        statement = statement.with_for_update()
    rules = {r.id: r for r in await session.scalars(statement.execution_options(populate_existing=True))}
    contact_ids = sorted({s.contact_id for ids in wanted.values() for s in ids if s.contact_id is not None})
    publishers = {
        publisher
        for publisher in await session.scalars(
            select(Contact.publisher_account_id).where(
                Contact.id.in_(contact_ids), Contact.publisher_account_id.is_not(None)
            )
        )
        if publisher is not None
    }
    # Every balance a purchase may change, locked once and in order (no deadlock with batch reveals).
    await contact_service.lock_accounts(session, {r.account_id for r in rules.values()} | publishers)
    # Seen again under the locks: an account suspended since the look-up buys nothing.
    held = set(
        await session.scalars(
            select(Account.id).where(
                Account.id.in_(sorted({r.account_id for r in rules.values()})), Account.status != "active"
            )
        )
    )
    rules = {rule_id: rule for rule_id, rule in rules.items() if rule.account_id not in held}
    attempts = sorted(
        ((signal.sequence, rule_id, signal) for rule_id, found in wanted.items() for signal in found),
        key=lambda item: (item[0], item[1]),
    )
    for _, rule_id, signal in attempts:
        rule = rules.get(rule_id)
        if rule is not None and rule_wants(rule, signal):
            await _buy(session, rule, signal, context)


async def _buy(session: AsyncSession, rule: AutoBuyRule, signal: SignalRecord, context: HookContext) -> None:
    now, settings = context.now, context.settings
    today = rule_service.today_of(now)
    if rule.spent_day != today:
        # The daily cap counts per UTC day (D24): the first purchase of a new day starts it again.
        rule.spent_day, rule.spent_today, rule.purchases_today = today, Decimal(0), 0
    if rule.daily_cap is not None and rule.purchases_today >= rule.daily_cap:
        return
    assert signal.contact_id is not None
    contact_id = contact_service.contact_public_id(signal.contact_id)
    contact = await session.get(Contact, signal.contact_id, populate_existing=True)
    if contact is None:
        return
    if rule.exclude_dnc and contact.phone:
        states = await dnc_service.lookup(session, [contact.phone], today=now.date())
        if not dnc_service.callable_phone(states[contact.phone]):
            return  # the rule leaves out phones that may not be called
    price = contact_service.reveal_price(contact, settings)
    remaining = rule_service.budget_remaining(rule)
    if remaining is not None and price > remaining:
        return  # never past the budget; a cheaper contact may still fit
    try:
        outcome = await contact_service.reveal_contact(
            session,
            account_id=rule.account_id,
            contact_id=contact_id,
            channel="auto_buy",
            ledger_kind=LEDGER_KIND,
            ledger_description=f"Auto-buy of {contact_id} ({contact.business_name}) by rule {rule.id}"
            + (f" ({rule.name})" if rule.name else ""),
            now=now,
            settings=settings,
            accounts_locked=True,
        )
    except (Suppressed, InsufficientCredits, NotFound):
        # D15 / the balance: nothing was charged (a suppression hit keeps its audit entry).
        return
    if outcome.already_revealed:
        return  # D10: the account has it already; no charge, no purchase
    rule.spent_total += outcome.charged
    rule.spent_today += outcome.charged
    rule.purchases_total += 1
    rule.purchases_today += 1
    rule.updated_at = now
    session.add(
        AutoBuyPurchase(
            rule_id=rule.id,
            account_id=rule.account_id,
            signal_id=signal.id,
            contact_id=signal.contact_id,
            credits_charged=outcome.charged,
            created_at=now,
        )
    )
    if rule_service.budget_spent(rule, settings):
        rule_service.pause_for_budget(rule, settings)
        await session.flush()
        await rule_service.write_keys(session, rule)
    await webhook_outbox.enqueue_event(
        session,
        account_id=rule.account_id,
        event_type=webhook_events.AUTO_BUY_PURCHASED,
        data={
            "rule_id": rule.id,
            "signal_id": signal.id,
            "contact_id": contact_id,
            "credits_charged": outcome.charged,
            "contact": outcome.contact.model_dump(mode="json"),
        },
        now=now,
    )
