"""The credits page: balance, free credits and their next reset, the ledger with its running
balance, and credits spent per day (D8, D11)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request, Response

from vpx.accounts import service as account_service
from vpx.clock import next_month_start
from vpx.credits import service as credit_service
from vpx.cursors import decode_cursor, encode_cursor
from vpx.dashboard import spending
from vpx.dashboard.pages import Page, dashboard_router
from vpx.dashboard.web import render
from vpx.db import WriteSession
from vpx.deps import AppSettings, Now

router = dashboard_router()

LEDGER_PAGE = 25


@router.get("/credits")
async def credits_page(
    request: Request,
    user: Page,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
    cursor: Annotated[str | None, Query(max_length=100)] = None,
) -> Response:
    before = decode_cursor(cursor, "ledger") if cursor else None
    # As GET /account does: a month that has begun gets its free credits (and ledger entry) now.
    balance = await credit_service.refresh_free_credits(session, account_id=user.account_id, now=now, settings=settings)
    account = await account_service.get_account(session, account_id=user.account_id)
    entries = await credit_service.list_ledger(
        session, account_id=user.account_id, limit=LEDGER_PAGE + 1, before_id=before
    )
    more = len(entries) > LEDGER_PAGE
    entries = entries[:LEDGER_PAGE]
    days = await spending.daily_spending(session, account_id=user.account_id, now=now)
    request.state.page_context["balance"] = balance.total
    return render(
        request,
        "credits.html",
        {
            "title": "Credits",
            "section": "credits",
            "balance_detail": balance,
            "allowance": credit_service.monthly_allowance(account.plan, settings),
            "plan": account.plan,
            "next_reset": next_month_start(now),
            "entries": entries,
            "next_cursor": encode_cursor("ledger", entries[-1].id) if more and entries else None,
            "first_page": before is None,
            "days": days,
            "bars": spending.chart_bars(days),
            "spent_total": sum((d.spent for d in days), start=credit_service.ZERO),
            "peak": max((d.spent for d in days), default=credit_service.ZERO),
        },
    )
