"""/api/v1/contacts/batch-reveal: reveal up to 100 contacts at once (D16). Standard or Full (D4)."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from fastapi import APIRouter, Path, Request, Response
from fastapi.responses import JSONResponse

from vpx.auth.dependencies import BuyCaller
from vpx.batches import service as batch_service
from vpx.batches.schemas import (
    BatchItemResult,
    BatchProgressItem,
    BatchRevealAccepted,
    BatchRevealProgress,
    BatchRevealRequest,
    BatchRevealResult,
)
from vpx.credits import service as credit_service
from vpx.db import ReadSession, WriteSession
from vpx.deps import AppSettings, Now
from vpx.errors import problem_responses
from vpx.idempotency.service import run_idempotent
from vpx.money import credits_header

router = APIRouter(prefix="/api/v1/contacts/batch-reveal", tags=["contacts"])

BatchId = Annotated[str, Path(max_length=40, examples=["brv_3kTz9aQ1xYb2LmN0"])]


@router.post(
    "",
    response_model=BatchRevealResult,
    responses={
        202: {"model": BatchRevealAccepted, "description": "With `webhook_url`: accepted; results follow by webhook."},
        **problem_responses(400, 401, 403, 409, 413, 422, 429),
    },
    summary="Reveal up to 100 contacts",
)
async def batch_reveal(
    body: BatchRevealRequest,
    request: Request,
    caller: BuyCaller,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
) -> Response:
    """1–100 ids (duplicates collapsed), each under every reveal rule: the suppression check, the
    contact's price, nothing charged for a contact this account revealed before; only revealed items are
    charged, and an item the remaining credits cannot pay for is `insufficient_credits` while the others
    go on. With `exclude_dnc`, contacts whose phone may not be called are left out (`do_not_call`, not
    charged). Accepts `Idempotency-Key`: a repeat with the same key and body within 24 hours returns the
    first response and charges nothing more."""

    async def handler() -> Response:
        if body.webhook_url is not None:
            started, secret = await batch_service.start_batch(
                session,
                account_id=caller.account_id,
                contact_ids=body.contact_ids,
                webhook_url=body.webhook_url,
                exclude_dnc=body.exclude_dnc,
                now=now,
                settings=settings,
                resolver=request.app.state.webhook_resolver,
                box=request.app.state.secrets,
            )
            accepted = BatchRevealAccepted(
                batch_id=started.id,
                status="processing",
                total=started.total,
                status_url=f"{router.prefix}/{started.id}",
                webhook_secret=secret,
            )
            return JSONResponse(
                accepted.model_dump(mode="json"), status_code=202, headers={"Location": accepted.status_url}
            )
        batch, results = await batch_service.reveal_batch_now(
            session,
            account_id=caller.account_id,
            contact_ids=body.contact_ids,
            now=now,
            settings=settings,
            exclude_dnc=body.exclude_dnc,
        )
        balance = await credit_service.get_balance(session, account_id=caller.account_id)
        charged = sum((r.credits_charged for r in results), Decimal(0))
        counts: dict[str, int] = {}
        for r in results:
            counts[r.status] = counts.get(r.status, 0) + 1
        answer = BatchRevealResult(
            batch_id=batch.id,
            status="completed",
            results=[
                BatchItemResult(
                    contact_id=r.contact_id,
                    status=r.status,
                    credits_charged=r.credits_charged,
                    contact=r.contact.model_copy(update={"credits_remaining": balance.total})
                    if r.contact is not None
                    else None,
                )
                for r in results
            ],
            counts=counts,
            credits_charged=charged,
            credits_remaining=balance.total,
        )
        # Every field the document marks required is in the answer, null or not.
        return JSONResponse(
            answer.model_dump(mode="json"),
            headers={
                "X-Credits-Charged": credits_header(charged),
                "X-Credits-Remaining": credits_header(balance.total),
            },
        )

    # With a webhook_url the 202 shows the batch's signing secret: what is kept for a repeat is sealed.
    return await run_idempotent(
        request, session, account_id=caller.account_id, handler=handler, seal_stored=body.webhook_url is not None
    )


@router.get(
    "/{batch_id}",
    response_model=BatchRevealProgress,
    responses=problem_responses(401, 403, 404, 422, 429),
    summary="A batch reveal's progress and results",
)
async def batch_progress(batch_id: BatchId, caller: BuyCaller, session: ReadSession) -> BatchRevealProgress:
    """Results so far, in request order (`pending` until revealed). Only the account that made the
    batch sees it; the revealed records themselves are at `GET /contacts/{id}`."""
    batch, items = await batch_service.get_batch(session, account_id=caller.account_id, batch_id=batch_id)
    counts: dict[str, int] = {}
    for item in items:
        counts[item.status] = counts.get(item.status, 0) + 1
    return BatchRevealProgress(
        batch_id=batch.id,
        status="completed" if batch.status == "completed" else "processing",
        total=batch.total,
        completed=sum(1 for i in items if i.status != "pending"),
        counts=counts,
        credits_charged=sum((i.credits_charged for i in items), Decimal(0)),
        results=[
            BatchProgressItem(contact_id=i.contact_id, status=i.status, credits_charged=i.credits_charged)
            for i in items
        ],
        webhook_url=batch.webhook_url,
        created_at=batch.created_at,
        completed_at=batch.completed_at,
    )
