"""A batch's look-ups done once for all its ids, and its buyer's balance held while the batch runs.

Taken after ``contacts.service.lock_accounts`` (on SQLite, inside the write transaction), so that
none of it can change until the batch commits: its contacts, the suppression entries that cover them
(by contact, phone or email, matched as ``suppression.service.find_suppression`` matches one
contact), the account's earlier reveals of them, their sources, whether any subscription wants
``contact.revealed``, and the balance, spent in memory under D8's free-credits-first rule and
written once at the end with the reveal and ledger rows.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import and_, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.compliance.dnc import service as dnc_service
from vpx.config import Settings
from vpx.contacts.schemas import PhoneDnc, SourceRef
from vpx.credits import service as credit_service
from vpx.errors import InsufficientCredits
from vpx.ids import parse_number_id
from vpx.models import Account, Contact, ContactSource, LedgerEntry, Reveal, Suppression, WebhookEndpoint
from vpx.money import credits_header
from vpx.suppression import service as suppression_service
from vpx.webhooks import events


@dataclass
class HeldBalance:
    """The locked buyer's balance, spent in memory; ``entries`` are its ledger rows to write."""

    account_id: str
    free: Decimal
    paid: Decimal
    now: datetime
    entries: list[dict[str, Any]] = field(default_factory=list)
    changed: bool = False

    def spend(self, amount: Decimal, *, kind: str, reference: str | None, description: str) -> credit_service.Debit:
        """As ``credits.service.spend``: free credits first (D8), never below zero (D11)."""
        total = self.free + self.paid
        if amount > total:
            raise InsufficientCredits(
                f"This costs {credits_header(amount)} credits; the balance is {credits_header(total)}.",
                headers={"X-Credits-Remaining": credits_header(total)},
            )
        from_free = min(self.free, amount)
        self.free -= from_free
        self.paid -= amount - from_free
        self.changed = True
        self.entries.append(
            {
                "account_id": self.account_id,
                "kind": kind,
                "amount": -amount,
                "balance_after": self.free + self.paid,
                "reference": reference,
                "description": description,
                "created_at": self.now,
            }
        )
        return credit_service.Debit(free=self.free, paid=self.paid, from_free=from_free)


@dataclass
class RevealPrefetch:
    contacts: dict[int, Contact]
    suppressions: dict[int, Suppression]
    reveals: dict[int, Reveal]
    sources: dict[int, list[SourceRef]]
    revealed_subscribed: bool
    balance: HeldBalance
    # The phones' do-not-call states (vpx.compliance.dnc), read once for the batch.
    phone_dnc: dict[str, PhoneDnc] = field(default_factory=dict)
    new_reveals: list[Reveal] = field(default_factory=list)

    def record_reveal(self, reveal: Reveal) -> None:
        self.reveals[reveal.contact_id] = reveal
        self.new_reveals.append(reveal)

    async def write(self, session: AsyncSession) -> None:
        """The balance, its ledger rows and the reveal rows, in three statements."""
        held = self.balance
        if held.changed:
            await session.execute(
                update(Account)
                .where(Account.id == held.account_id)
                .values(free_credits=held.free, paid_credits=held.paid)
                .execution_options(synchronize_session=False)
            )
            await session.execute(insert(LedgerEntry), held.entries)
            held.entries.clear()
            held.changed = False
        if self.new_reveals:
            rows = [
                {
                    c: getattr(r, c)
                    for c in (
                        "account_id",
                        "contact_id",
                        "credits_charged",
                        "channel",
                        "created_at",
                        "free_spent",
                        "fields_sold",
                    )
                }
                for r in self.new_reveals
            ]
            await session.execute(insert(Reveal), rows)
            self.new_reveals.clear()


async def prefetch_for_reveal(
    session: AsyncSession, *, account_id: str, contact_ids: list[str], now: datetime, settings: Settings
) -> RevealPrefetch:
    """Call it after ``lock_accounts``: nothing it read can change under the batch then."""
    numbers = sorted({n for n in (parse_number_id("ct", c) for c in contact_ids) if n is not None})
    contacts: dict[int, Contact] = {}
    if numbers:
        contacts = {c.id: c for c in await session.scalars(select(Contact).where(Contact.id.in_(numbers)))}
    reveals: dict[int, Reveal] = {}
    if contacts:
        found = await session.scalars(
            select(Reveal).where(Reveal.account_id == account_id, Reveal.contact_id.in_(list(contacts)))
        )
        reveals = {r.contact_id: r for r in found}
    balance = await credit_service.refresh_free_credits(session, account_id=account_id, now=now, settings=settings)
    return RevealPrefetch(
        contacts=contacts,
        suppressions=await _suppressions(session, list(contacts.values())),
        reveals=reveals,
        sources=await _sources(session, list(contacts)),
        revealed_subscribed=await _subscribed(session, account_id, events.CONTACT_REVEALED),
        balance=HeldBalance(account_id=account_id, free=balance.free, paid=balance.paid, now=now),
        phone_dnc=await dnc_service.lookup(session, [c.phone for c in contacts.values()], today=now.date()),
    )


async def _suppressions(session: AsyncSession, contacts: list[Contact]) -> dict[int, Suppression]:
    if not contacts:
        return {}
    by_value: dict[tuple[str, str], list[int]] = defaultdict(list)
    for contact in contacts:
        for pair in suppression_service.covering_values(contact):
            by_value[pair].append(contact.id)
    conditions = [
        and_(Suppression.kind == kind, Suppression.value.in_([v for k, v in by_value if k == kind]))
        for kind in suppression_service.COVERING_KINDS
        if any(k == kind for k, _ in by_value)
    ]
    found: dict[int, Suppression] = {}
    # Lowest id first, as the one-contact check reports it.
    for entry in await session.scalars(select(Suppression).where(or_(*conditions)).order_by(Suppression.id)):
        for contact_id in by_value.get((entry.kind, entry.value), []):
            found.setdefault(contact_id, entry)
    return found


async def _sources(session: AsyncSession, contact_ids: list[int]) -> dict[int, list[SourceRef]]:
    found: dict[int, list[SourceRef]] = defaultdict(list)
    if contact_ids:
        rows = await session.scalars(
            select(ContactSource).where(ContactSource.contact_id.in_(contact_ids)).order_by(ContactSource.id)
        )
        for s in rows:
            ref = SourceRef(registry=s.registry_name, record_id=s.record_id, file_date=s.file_date)
            found[s.contact_id].append(ref)
    return found


async def _subscribed(session: AsyncSession, account_id: str, event_type: str) -> bool:
    endpoints = await session.scalars(
        select(WebhookEndpoint.events).where(
            WebhookEndpoint.account_id == account_id, WebhookEndpoint.status == "active"
        )
    )
    return any(event_type in (chosen or []) for chosen in endpoints)
