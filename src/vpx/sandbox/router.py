"""/api/v1/account/test-balance/reset: the account's test balance set back to its start."""

from __future__ import annotations

from fastapi import APIRouter, Request

from vpx.accounts.schemas import BalanceView
from vpx.auth.dependencies import BuyCaller
from vpx.deps import AppSettings, Now
from vpx.errors import NotFound, problem_responses
from vpx.sandbox import accounts
from vpx.sandbox.schemas import TestBalanceReset
from vpx.sandbox.world import Sandbox

router = APIRouter(prefix="/api/v1/account", tags=["account"])


@router.post(
    "/test-balance/reset",
    response_model=TestBalanceReset,
    responses=problem_responses(401, 403, 404, 429),
    summary="Reset the test balance",
)
async def reset_test_balance(request: Request, caller: BuyCaller, settings: AppSettings, now: Now) -> TestBalanceReset:
    """Sets the account's test balance (test mode's, never the real one) back to this month's free
    credits plus the test credits every test balance starts with, recorded in test mode's ledger as a
    `test_reset` entry. Test mode's reveals, rules, webhooks and the rest are kept. Standard or Full
    Access keys of either mode."""
    sandbox: Sandbox | None = request.app.state.sandbox
    if sandbox is None:
        raise NotFound("This server runs without test mode.")
    await sandbox.ensure_account(caller.account_id)
    balance = await accounts.reset_balance(
        sandbox.database, account_id=caller.account_id, now=now, settings=sandbox.settings
    )
    return TestBalanceReset(
        livemode=False,
        balance=BalanceView(total=balance.total, free=balance.free, paid=balance.paid),
        test_credits=settings.test_credits,
        reset_at=now,
    )
