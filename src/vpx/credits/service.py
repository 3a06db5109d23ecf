"""Every change of a balance goes through here and leaves a ledger entry with the balance after it.

A balance changes only on its row locked first (PostgreSQL: FOR NO KEY UPDATE; SQLite's write
transaction holds the database), so no interleaving of concurrent requests can take it below zero
(D11), and what a spend took from free credits is known exactly: a refund gives credits back to the
pool they came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from sqlalchemy import Table, bindparam, insert, literal, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import month_key
from vpx.config import Settings
from vpx.errors import InsufficientCredits, NotFound
from vpx.models import Account, LedgerEntry
from vpx.money import CreditsType, credits_header

ZERO = Decimal(0)


@dataclass(frozen=True)
class Balance:
    free: Decimal
    paid: Decimal

    @property
    def total(self) -> Decimal:
        return self.free + self.paid


def monthly_allowance(plan: str, settings: Settings) -> Decimal:
    """Free credits a plan receives each UTC month (D8)."""
    return settings.free_monthly_credits if plan == "free" else ZERO


def _credits(value: Decimal) -> object:
    return literal(value, CreditsType())


async def refresh_free_credits(session: AsyncSession, *, account_id: str, now: datetime, settings: Settings) -> Balance:
    """Starts the account's new free-credit month if it has not started yet; returns the balance.

    Unused free credits of the past month expire (D8); one ``free_monthly`` entry records the net change.
    """
    period = month_key(now)
    row = (
        await session.execute(
            select(Account.plan, Account.free_credits, Account.paid_credits, Account.free_period).where(
                Account.id == account_id
            )
        )
    ).one_or_none()
    if row is None:
        raise NotFound(f"No account {account_id}.")
    if row.free_period == period:
        return Balance(free=row.free_credits, paid=row.paid_credits)
    locked = (
        await session.execute(
            select(Account.plan, Account.free_credits, Account.paid_credits, Account.free_period)
            .where(Account.id == account_id)
            # NO KEY UPDATE, as the balance UPDATE itself takes: it does not conflict with the KEY SHARE
            # lock that inserting a row referencing the account (a reveal, a ledger entry) takes.
            .with_for_update(key_share=True)
        )
    ).one()
    if locked.free_period == period:
        return Balance(free=locked.free_credits, paid=locked.paid_credits)
    allowance = monthly_allowance(locked.plan, settings)
    await session.execute(
        update(Account).where(Account.id == account_id).values(free_credits=allowance, free_period=period)
    )
    change = allowance - locked.free_credits
    expired = f" ({credits_header(locked.free_credits)} unused expired)" if locked.free_credits else ""
    session.add(
        LedgerEntry(
            account_id=account_id,
            kind="free_monthly",
            amount=change,
            balance_after=allowance + locked.paid_credits,
            reference=period,
            description=f"Free plan credits for {period}: {credits_header(allowance)}{expired}",
            created_at=now,
        )
    )
    return Balance(free=allowance, paid=locked.paid_credits)


@dataclass(frozen=True)
class Debit(Balance):
    """The balance after a spend, and how much of the amount came from free credits."""

    from_free: Decimal = ZERO


async def spend(
    session: AsyncSession,
    *,
    account_id: str,
    amount: Decimal,
    kind: str,
    reference: str | None,
    description: str,
    now: datetime,
    settings: Settings,
) -> Debit:
    """Takes ``amount`` from the balance, free credits first; raises InsufficientCredits, changing
    nothing, when the balance is short."""
    if amount <= 0:
        raise ValueError("spend needs a positive amount")
    row = await _debit(session, account_id=account_id, amount=amount, period=month_key(now))
    if row is None:
        # Either the balance is short or a new free-credit month has begun: start it and try again.
        await refresh_free_credits(session, account_id=account_id, now=now, settings=settings)
        row = await _debit(session, account_id=account_id, amount=amount, period=month_key(now))
    if row is None:
        balance = await get_balance(session, account_id=account_id)
        raise InsufficientCredits(
            f"This costs {credits_header(amount)} credits; the balance is {credits_header(balance.total)}.",
            headers={"X-Credits-Remaining": credits_header(balance.total)},
        )
    connection = await session.connection()
    await connection.execute(
        _INSERT_LEDGER,
        {
            "account_id": account_id,
            "kind": kind,
            "amount": -amount,
            "balance_after": row.total,
            "reference": reference,
            "description": description,
            "created_at": now,
        },
    )
    return row


_accounts: Table = Account.__table__  # type: ignore[assignment]
_ledger: Table = LedgerEntry.__table__  # type: ignore[assignment]
_INSERT_LEDGER = insert(_ledger)
# The row as it stands, locked until the transaction ends (FOR NO KEY UPDATE on PostgreSQL, what the
# balance UPDATE takes anyway; SQLite's write transaction already holds the database): what the debit
# takes from free credits is then known exactly, so a refund can give it back to the same pool.
_LOCKED_BALANCE = {
    "postgresql": select(_accounts.c.free_credits, _accounts.c.paid_credits, _accounts.c.free_period)
    .where(_accounts.c.id == bindparam("account"))
    .with_for_update(key_share=True),
    "sqlite": select(_accounts.c.free_credits, _accounts.c.paid_credits, _accounts.c.free_period).where(
        _accounts.c.id == bindparam("account")
    ),
}
_SET_BALANCE = (
    update(_accounts)
    .where(_accounts.c.id == bindparam("account"))
    .values(free_credits=bindparam("free", type_=CreditsType()), paid_credits=bindparam("paid", type_=CreditsType()))
)


async def _debit(session: AsyncSession, *, account_id: str, amount: Decimal, period: str) -> Debit | None:
    """Free credits first, never below zero, only within the current free month, on the row locked
    first. None when it changed nothing (the balance is short or the month has turned)."""
    connection = await session.connection()
    row = (await connection.execute(_LOCKED_BALANCE[connection.dialect.name], {"account": account_id})).one_or_none()
    if row is None or row.free_period != period or row.free_credits + row.paid_credits < amount:
        return None
    from_free = min(row.free_credits, amount)
    free, paid = row.free_credits - from_free, row.paid_credits - (amount - from_free)
    await connection.execute(_SET_BALANCE, {"account": account_id, "free": free, "paid": paid})
    return Debit(free=free, paid=paid, from_free=from_free)


async def add_credits(
    session: AsyncSession,
    *,
    account_id: str,
    amount: Decimal,
    kind: str,
    reference: str | None,
    description: str,
    now: datetime,
    settings: Settings,
) -> Balance:
    """Adds carried-over credits (grant, revenue_share, refund) and records them."""
    if amount <= 0:
        raise ValueError("add_credits needs a positive amount")
    await refresh_free_credits(session, account_id=account_id, now=now, settings=settings)
    result = await session.execute(
        update(Account)
        .where(Account.id == account_id)
        .values(paid_credits=Account.paid_credits + _credits(amount))
        .returning(Account.free_credits, Account.paid_credits)
        .execution_options(synchronize_session=False)
    )
    row = result.one_or_none()
    if row is None:
        raise NotFound(f"No account {account_id}.")
    after = Balance(free=row[0], paid=row[1])
    session.add(
        LedgerEntry(
            account_id=account_id,
            kind=kind,
            amount=amount,
            balance_after=after.total,
            reference=reference,
            description=description,
            created_at=now,
        )
    )
    return after


async def give_back(
    session: AsyncSession,
    *,
    account_id: str,
    free: Decimal,
    paid: Decimal,
    kind: str,
    reference: str | None,
    description: str,
    now: datetime,
    settings: Settings,
) -> Balance:
    """Returns credits to the pools a spend took them from: ``free`` to this month's free credits
    (they expire with the month, as free credits do, D8), ``paid`` to the carried-over ones; one
    ledger entry for both."""
    if free < 0 or paid < 0 or free + paid <= 0:
        raise ValueError("give_back needs a positive amount")
    await refresh_free_credits(session, account_id=account_id, now=now, settings=settings)
    result = await session.execute(
        update(Account)
        .where(Account.id == account_id)
        .values(free_credits=Account.free_credits + _credits(free), paid_credits=Account.paid_credits + _credits(paid))
        .returning(Account.free_credits, Account.paid_credits)
        .execution_options(synchronize_session=False)
    )
    row = result.one_or_none()
    if row is None:
        raise NotFound(f"No account {account_id}.")
    after = Balance(free=row[0], paid=row[1])
    session.add(
        LedgerEntry(
            account_id=account_id,
            kind=kind,
            amount=free + paid,
            balance_after=after.total,
            reference=reference,
            description=description,
            created_at=now,
        )
    )
    return after


async def get_balance(session: AsyncSession, *, account_id: str) -> Balance:
    row = (
        await session.execute(select(Account.free_credits, Account.paid_credits).where(Account.id == account_id))
    ).one_or_none()
    if row is None:
        raise NotFound(f"No account {account_id}.")
    return Balance(free=row[0], paid=row[1])


def balance_of(account: Account, *, now: datetime, settings: Settings) -> Balance:
    """``effective_balance`` of an account row already loaded."""
    return _effective(account.plan, account.free_credits, account.paid_credits, account.free_period, now, settings)


def _effective(
    plan: str, free_credits: Decimal, paid_credits: Decimal, free_period: str, now: datetime, settings: Settings
) -> Balance:
    free = free_credits if free_period == month_key(now) else monthly_allowance(plan, settings)
    return Balance(free=free, paid=paid_credits)


async def effective_balance(session: AsyncSession, *, account_id: str, now: datetime, settings: Settings) -> Balance:
    """The balance as it stands now, counting a free-credit month that has begun but not yet been
    written (reads never write)."""
    row = (
        await session.execute(
            select(Account.plan, Account.free_credits, Account.paid_credits, Account.free_period).where(
                Account.id == account_id
            )
        )
    ).one_or_none()
    if row is None:
        raise NotFound(f"No account {account_id}.")
    return _effective(row.plan, row.free_credits, row.paid_credits, row.free_period, now, settings)


async def list_ledger(
    session: AsyncSession, *, account_id: str, limit: int, before_id: int | None
) -> list[LedgerEntry]:
    """Newest first; ``before_id`` continues a page."""
    query = select(LedgerEntry).where(LedgerEntry.account_id == account_id)
    if before_id is not None:
        query = query.where(LedgerEntry.id < before_id)
    query = query.order_by(LedgerEntry.id.desc()).limit(limit)
    return list((await session.scalars(query)).all())
