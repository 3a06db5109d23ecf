"""/api/v1/account: the caller's account, balance and ledger."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from vpx.accounts import service as account_service
from vpx.accounts.schemas import AccountView, BalanceView, LedgerEntryView, LedgerPage
from vpx.auth import service as key_service
from vpx.auth.dependencies import ReadCaller
from vpx.clock import next_month_start
from vpx.credits import service as credit_service
from vpx.cursors import decode_cursor, encode_cursor
from vpx.db import Database, WriteSession
from vpx.deps import AppSettings, Now
from vpx.errors import problem_responses

router = APIRouter(prefix="/api/v1/account", tags=["account"])


async def _active_keys(request: Request, *, account_id: str, livemode: bool) -> int:
    database: Database = request.app.state.database
    async with database.read_sessions() as session:
        return await key_service.count_active_keys(session, account_id=account_id, livemode=livemode)


@router.get("", response_model=AccountView, responses=problem_responses(401, 403, 429), summary="The account")
async def get_account(
    request: Request, caller: ReadCaller, session: WriteSession, settings: AppSettings, now: Now
) -> AccountView:
    """Plan, balances, active keys and the next free-credit reset (free credits do not carry over)."""
    balance = await credit_service.refresh_free_credits(
        session, account_id=caller.account_id, now=now, settings=settings
    )
    account = await account_service.get_account(session, account_id=caller.account_id)
    name, email, plan = account.name, account.email, account.plan
    if not caller.livemode:
        # Test mode's shadow of the account holds no personal data: the account is the main database's.
        database: Database = request.app.state.database
        async with database.read_sessions() as main:
            found = await account_service.get_account(main, account_id=caller.account_id)
            name, email, plan = found.name, found.email, found.plan
    return AccountView(
        id=account.id,
        name=name,
        email=email,
        plan=plan,
        livemode=caller.livemode,
        balance=BalanceView(total=balance.total, free=balance.free, paid=balance.paid),
        free_credits_monthly=credit_service.monthly_allowance(account.plan, settings),
        next_free_reset=next_month_start(now),
        # Keys are in the main database: counted there for a test key too (its session is the sandbox's).
        active_keys=await _active_keys(request, account_id=account.id, livemode=caller.livemode),
        max_active_keys=settings.max_active_keys,
        created_at=account.created_at,
    )


@router.get(
    "/ledger",
    response_model=LedgerPage,
    responses=problem_responses(401, 403, 422, 429),
    summary="The credit ledger",
)
async def get_ledger(
    caller: ReadCaller,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
    limit: Annotated[int, Query(ge=1, le=100, description="Page size, 1–100.")] = 25,
    cursor: Annotated[str | None, Query(max_length=100, description="From a previous page.")] = None,
) -> LedgerPage:
    """Every balance change, newest first, with the balance after it."""
    before = decode_cursor(cursor, "ledger") if cursor else None
    await credit_service.refresh_free_credits(session, account_id=caller.account_id, now=now, settings=settings)
    entries = await credit_service.list_ledger(session, account_id=caller.account_id, limit=limit + 1, before_id=before)
    more = len(entries) > limit
    entries = entries[:limit]
    return LedgerPage(
        entries=[
            LedgerEntryView(
                id=f"le_{e.id}",
                kind=e.kind,
                amount=e.amount,
                balance_after=e.balance_after,
                reference=e.reference,
                description=e.description,
                created_at=e.created_at,
            )
            for e in entries
        ],
        limit=limit,
        next_cursor=encode_cursor("ledger", entries[-1].id) if more and entries else None,
    )
