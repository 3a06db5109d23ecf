"""The operator's account routes (`X-Admin-Token`): the same lifecycle as `vpx accounts`."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.accounts import lifecycle
from vpx.admin.auth import ADMIN_REFUSALS, require_admin
from vpx.admin.schemas import (
    AccountStatus,
    AdminAccount,
    AdminAccountList,
    AuditTrail,
    GrantRequest,
    GrantResult,
    SuspendRequest,
    grant_result,
)
from vpx.config import Settings
from vpx.db import ReadSession, WriteSession
from vpx.deps import AppSettings, Now
from vpx.errors import problem_responses
from vpx.sandbox import accounts as sandbox_accounts

router = APIRouter(prefix="/api/v1/admin/accounts", tags=["admin"])
Admin = Annotated[str, Depends(require_admin)]
AccountId = Annotated[str, Path(max_length=40, examples=["acc_4Fq9zK2mX7bT1cYw"], description="`acc_…`")]


def _actor(admin: str) -> str:
    return f"admin:{admin}"


async def _view(session: AsyncSession, account_id: str, now: datetime, settings: Settings) -> AdminAccount:
    found = await lifecycle.summary(session, account_id=account_id, now=now, settings=settings)
    return AdminAccount(**found.view())


@router.get(
    "",
    response_model=AdminAccountList,
    responses={**problem_responses(422, 429), **ADMIN_REFUSALS},
    summary="List accounts (operators)",
)
async def list_accounts(
    admin: Admin,
    session: ReadSession,
    settings: AppSettings,
    now: Now,
    status: Annotated[AccountStatus | None, Query(description="Only accounts in this state.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 1000,
) -> AdminAccountList:
    """Oldest first, with balance, active keys and the last request."""
    found = await lifecycle.summaries(session, now=now, settings=settings, status=status, limit=limit)
    return AdminAccountList(accounts=[AdminAccount(**a.view()) for a in found])


@router.get(
    "/{account_id}",
    response_model=AdminAccount,
    responses={**problem_responses(404, 429), **ADMIN_REFUSALS},
    summary="One account (operators)",
)
async def get_account(
    account_id: AccountId, admin: Admin, session: ReadSession, settings: AppSettings, now: Now
) -> AdminAccount:
    return await _view(session, account_id, now, settings)


@router.post(
    "/{account_id}/suspend",
    response_model=AdminAccount,
    responses={**problem_responses(400, 404, 409, 413, 422, 429), **ADMIN_REFUSALS},
    summary="Suspend an account (operators)",
)
async def suspend_account(
    account_id: AccountId, body: SuspendRequest, admin: Admin, session: WriteSession, settings: AppSettings, now: Now
) -> AdminAccount:
    """Its keys get 403 `account_suspended`, its dashboard sign-in is refused, its auto-buy rules and
    sequences stop and its webhook deliveries wait. Suspending a suspended account changes nothing."""
    await lifecycle.suspend(session, account_id=account_id, reason=body.reason, actor=_actor(admin), now=now)
    return await _view(session, account_id, now, settings)


@router.post(
    "/{account_id}/resume",
    response_model=AdminAccount,
    responses={**problem_responses(404, 409, 429), **ADMIN_REFUSALS},
    summary="Resume a suspended account (operators)",
)
async def resume_account(
    account_id: AccountId, admin: Admin, session: WriteSession, settings: AppSettings, now: Now
) -> AdminAccount:
    """Everything held goes on: waiting webhook deliveries go out in order."""
    await lifecycle.resume(session, account_id=account_id, actor=_actor(admin), now=now)
    return await _view(session, account_id, now, settings)


@router.delete(
    "/{account_id}",
    response_model=AdminAccount,
    responses={**problem_responses(404, 429), **ADMIN_REFUSALS},
    summary="Delete an account (operators)",
)
async def delete_account(
    request: Request, account_id: AccountId, admin: Admin, session: WriteSession, settings: AppSettings, now: Now
) -> AdminAccount:
    """Revokes its keys and erases its sign-in, sessions, webhooks, provider keys, mailboxes, visitor
    sites, name and email, in test mode too; keeps its ledger. Answers the account as it remains
    (`deleted`); deleting it again is not an error."""
    await lifecycle.delete_account(session, account_id=account_id, actor=_actor(admin), now=now)
    sandbox = request.app.state.sandbox
    if sandbox is not None:  # test mode's data that acts for the account (vpx.sandbox)
        await sandbox_accounts.delete_shadow(
            settings, account_id=account_id, actor=_actor(admin), now=now, sandbox=sandbox.database
        )
    return await _view(session, account_id, now, settings)


@router.post(
    "/{account_id}/credits",
    response_model=GrantResult,
    responses={**problem_responses(400, 404, 409, 413, 422, 429), **ADMIN_REFUSALS},
    summary="Grant credits (operators)",
)
async def grant_credits(
    account_id: AccountId, body: GrantRequest, admin: Admin, session: WriteSession, settings: AppSettings, now: Now
) -> GrantResult:
    """Carried-over credits with a ledger entry (the note), written to the audit trail."""
    balance = await lifecycle.grant(
        session,
        account_id=account_id,
        amount=body.amount,
        note=body.note,
        actor=_actor(admin),
        now=now,
        settings=settings,
    )
    return grant_result(account_id, body.amount, balance.total)


@router.get(
    "/{account_id}/audit",
    response_model=AuditTrail,
    responses={**problem_responses(404, 429), **ADMIN_REFUSALS},
    summary="An account's audit trail (operators)",
)
async def account_audit(account_id: AccountId, admin: Admin, session: ReadSession) -> AuditTrail:
    entries = await lifecycle.audit_trail(session, account_id=account_id)
    return AuditTrail.model_validate({"account_id": account_id, "entries": entries})
