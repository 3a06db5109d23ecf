"""Each account's shadow in the sandbox (the same id, its own test balance) and resetting that balance.

The shadow is made the first time the account uses a test key: the account's id and plan with this
month's free credits and ``test_credits`` granted. It holds no personal data: the account's name and
email stay in the main database, where the account's answer reads them (vpx.accounts.router). Nothing
in the shadow ever reaches the main database, nor anything there it.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import month_key
from vpx.config import Settings
from vpx.credits import service as credit_service
from vpx.db import Database
from vpx.errors import NotFound
from vpx.models import Account, LedgerEntry

TEST_GRANT = "Test credits"
RESET_KIND = "test_reset"  # a ledger entry of test mode only: the balance set back to its start


async def ensure_shadow(
    main: Database, sandbox: Database, *, account_id: str, now: datetime, settings: Settings
) -> bool:
    """Makes the account's shadow in the sandbox unless it is there; True when it was made."""
    async with sandbox.read_sessions() as session:
        if await session.scalar(select(Account.id).where(Account.id == account_id)) is not None:
            return False
    async with main.read_sessions() as session:
        account = await session.get(Account, account_id)
        if account is None:
            raise NotFound(f"No account {account_id}.")
        plan, created_at = account.plan, account.created_at
    try:
        async with sandbox.writer_turn(), sandbox.write_sessions() as session, session.begin():
            if await session.scalar(select(Account.id).where(Account.id == account_id)) is not None:
                return False
            await _add_shadow(session, account_id, "", None, plan, created_at, now, settings)
        return True
    except IntegrityError:  # another request made it first
        return False


async def _add_shadow(
    session: AsyncSession,
    account_id: str,
    name: str,
    email: str | None,
    plan: str,
    created_at: datetime,
    now: datetime,
    settings: Settings,
) -> None:
    allowance = credit_service.monthly_allowance(plan, settings)
    period = month_key(now)
    session.add(
        Account(
            id=account_id,
            name=name,
            email=email,
            plan=plan,
            free_credits=allowance,
            free_period=period,
            paid_credits=settings.test_credits,
            created_at=created_at,
        )
    )
    await session.flush()
    if allowance:
        session.add(
            LedgerEntry(
                account_id=account_id,
                kind="free_monthly",
                amount=allowance,
                balance_after=allowance,
                reference=period,
                description=f"Free plan credits for {period}",
                created_at=now,
            )
        )
    if settings.test_credits:
        session.add(
            LedgerEntry(
                account_id=account_id,
                kind="grant",
                amount=settings.test_credits,
                balance_after=allowance + settings.test_credits,
                reference=None,
                description=TEST_GRANT,
                created_at=now,
            )
        )


async def reset_balance(
    sandbox: Database, *, account_id: str, now: datetime, settings: Settings
) -> credit_service.Balance:
    """Sets the test balance back to what a shadow starts with (this month's free credits and
    ``test_credits``), with a ``test_reset`` ledger entry for the difference; the shadow's reveals,
    rules and the rest are kept."""
    async with sandbox.writer_turn(), sandbox.write_sessions() as session, session.begin():
        before = await credit_service.refresh_free_credits(session, account_id=account_id, now=now, settings=settings)
        plan = await session.scalar(select(Account.plan).where(Account.id == account_id).with_for_update())
        allowance = credit_service.monthly_allowance(plan or "free", settings)
        await session.execute(
            update(Account)
            .where(Account.id == account_id)
            .values(free_credits=allowance, free_period=month_key(now), paid_credits=settings.test_credits)
            .execution_options(synchronize_session=False)
        )
        after = credit_service.Balance(free=allowance, paid=settings.test_credits)
        session.add(
            LedgerEntry(
                account_id=account_id,
                kind=RESET_KIND,
                amount=after.total - before.total,
                balance_after=after.total,
                reference=None,
                description="Test balance reset",
                created_at=now,
            )
        )
    return after


async def delete_shadow(
    settings: Settings, *, account_id: str, actor: str, now: datetime, sandbox: Database | None = None
) -> bool:
    """An account deleted in the main database is deleted in the sandbox too, as the main one is (its
    webhooks, mailboxes, provider keys and the rest of test mode's data that acts for it); False when it
    has no shadow, or the server runs without a sandbox. ``sandbox``: the server's, else one opened here."""
    from vpx.accounts import lifecycle
    from vpx.sandbox import location

    if not settings.test_mode:
        return False
    where = location.sandbox_settings(settings)
    if not await location.exists(where):  # no test key has made it: nothing to delete
        return False
    database = sandbox or Database(where, livemode=False)
    try:
        async with database.writer_turn(), database.write_sessions() as session, session.begin():
            if await session.scalar(select(Account.id).where(Account.id == account_id)) is None:
                return False
            return await lifecycle.delete_account(session, account_id=account_id, actor=actor, now=now)
    finally:
        if sandbox is None:
            await database.dispose()
