"""/api/v1/contacts/contribute and /api/v1/publisher: contributing contacts and what they earn (D17).

Standard or Full keys (D4). The publisher views need the same level as contributing: they return the
full records the account contributed (phones included) and its revenue, which a Read Only key, often
handed to dashboards and analysts, should not see.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from vpx.auth.dependencies import BuyCaller
from vpx.cursors import decode_cursor, encode_cursor
from vpx.db import BulkWriteSession, ReadSession
from vpx.deps import AppSettings, Now, Search
from vpx.errors import problem_responses
from vpx.idempotency.service import run_idempotent
from vpx.ids import public_number_id
from vpx.publishers import service as publisher_service
from vpx.publishers.schemas import (
    ContributeRequest,
    ContributeResult,
    Contribution,
    ContributionPage,
    Earnings,
    MonthEarnings,
    RowResult,
)

contribute_router = APIRouter(prefix="/api/v1/contacts", tags=["publishers"])
router = APIRouter(prefix="/api/v1/publisher", tags=["publishers"])


@contribute_router.post(
    "/contribute",
    response_model=ContributeResult,
    responses=problem_responses(400, 401, 403, 409, 413, 422, 429),
    summary="Contribute contacts",
)
async def contribute(
    body: ContributeRequest,
    request: Request,
    caller: BuyCaller,
    session: BulkWriteSession,
    search: Search,
    settings: AppSettings,
    now: Now,
) -> Response:
    """Up to 1,000 contacts. Each row is `accepted` (searchable at once, source `contributed`),
    `duplicate` (same phone, or same business name + city + state, as a catalogue contact or an
    earlier row) or `rejected` with field errors. A duplicate of a catalogue contact carries its
    `contact_id` only when your account contributed or revealed that contact; a duplicate of an
    earlier row carries `duplicate_of_index` and the contact that row became. Contacts no longer in
    the catalogue (deactivated) are not duplicates. Other accounts' reveals of accepted contacts earn
    the publisher a revenue share.

    Every row sent counts against the account's daily budget (by default 5,000 rows per UTC day),
    whatever becomes of it; a request that would go past what is left today is refused whole, nothing
    counted or added, with `429` and `Retry-After` (seconds until midnight UTC), and one with more rows
    than the whole budget with `422`. Accepts `Idempotency-Key`: a repeat with the same key and body
    within 24 hours returns the first response and is not counted again."""

    async def handler() -> Response:
        results = await publisher_service.contribute(
            session,
            account_id=caller.account_id,
            rows=body.contacts,
            search=search,
            now=now,
            rows_per_day=settings.contribution_rows_per_day,
        )
        # A thousand rows take a few milliseconds to write out: not on the event loop.
        return Response(await asyncio.to_thread(_answer, results), media_type="application/json")

    return await run_idempotent(request, session, account_id=caller.account_id, handler=handler)


def _answer(results: list[RowResult]) -> bytes:
    counts = {"accepted": 0, "duplicate": 0, "rejected": 0}
    for result in results:
        counts[result.status] += 1
    return ContributeResult(results=results, counts=counts).model_dump_json(exclude_none=True).encode()


@router.get(
    "/contributions",
    response_model=ContributionPage,
    responses=problem_responses(401, 403, 422, 429),
    summary="The account's contributed contacts",
)
async def list_contributions(
    caller: BuyCaller,
    session: ReadSession,
    limit: Annotated[int, Query(ge=1, le=100, description="Page size, 1–100.")] = 25,
    cursor: Annotated[str | None, Query(max_length=100, description="From a previous page.")] = None,
) -> ContributionPage:
    """Newest first, each with the reveals by other accounts that paid a share, and the credits earned."""
    before = decode_cursor(cursor, "contributions") if cursor else None
    rows = await publisher_service.list_contributions(
        session, account_id=caller.account_id, limit=limit + 1, before_id=before
    )
    more = len(rows) > limit
    rows = rows[:limit]
    return ContributionPage(
        contributions=[
            Contribution(
                contact_id=public_number_id("ct", c.id),
                business_name=c.business_name,
                phone=c.phone,
                city=c.city,
                state=c.state,
                industry=c.industry,
                status=c.status,
                contributed_at=c.created_at,
                paid_reveals=paid,
                earned=earned,
            )
            for c, paid, earned in rows
        ],
        limit=limit,
        next_cursor=encode_cursor("contributions", rows[-1][0].id) if more and rows else None,
    )


@router.get(
    "/earnings",
    response_model=Earnings,
    responses=problem_responses(401, 403, 429),
    summary="Revenue share earned",
)
async def get_earnings(caller: BuyCaller, session: ReadSession, settings: AppSettings) -> Earnings:
    """Credits earned from other accounts' reveals of contributed contacts (`revenue_share` ledger
    entries, which carry over like granted credits), in total and by UTC month."""
    total, paid, contributed, months = await publisher_service.earnings(session, account_id=caller.account_id)
    return Earnings(
        revenue_share_percent=settings.revenue_share_percent,
        total_earned=total,
        paid_reveals=paid,
        contributed_contacts=contributed,
        months=[MonthEarnings(month=m, earned=e, paid_reveals=n) for m, e, n in months],
    )
