"""Creating and reading accounts."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import month_key
from vpx.config import Settings
from vpx.credits import service as credit_service
from vpx.errors import Conflict, NotFound
from vpx.ids import new_id
from vpx.models import Account, LedgerEntry

PLANS = ("free",)


async def create_account(
    session: AsyncSession,
    *,
    name: str,
    email: str | None,
    plan: str,
    now: datetime,
    settings: Settings,
    start_free_month: bool = True,
) -> Account:
    """A new account on ``plan`` with this month's free credits already in its ledger (D8). With
    ``start_free_month=False`` it has none until ``credit_service.refresh_free_credits`` starts its
    first month (the dashboard's sign-up, once the email address is confirmed)."""
    if email is not None:
        email = email.strip().lower()
        taken = await session.scalar(select(Account.id).where(Account.email == email))
        if taken is not None:
            raise Conflict(f"An account with the email {email} already exists.")
    allowance = credit_service.monthly_allowance(plan, settings) if start_free_month else credit_service.ZERO
    period = month_key(now) if start_free_month else ""
    account = Account(
        id=new_id("acc"),
        name=name,
        email=email,
        plan=plan,
        free_credits=allowance,
        free_period=period,
        paid_credits=credit_service.ZERO,
        created_at=now,
    )
    session.add(account)
    await session.flush()
    if allowance:
        session.add(
            LedgerEntry(
                account_id=account.id,
                kind="free_monthly",
                amount=allowance,
                balance_after=allowance,
                reference=period,
                description=f"Free plan credits for {period}",
                created_at=now,
            )
        )
    return account


async def get_account(session: AsyncSession, *, account_id: str) -> Account:
    account = await session.get(Account, account_id)
    if account is None:
        raise NotFound(f"No account {account_id}.")
    return account
