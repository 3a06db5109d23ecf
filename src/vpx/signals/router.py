"""/api/v1/signals: query (D22), get, batch, purchase (D9); /api/v1/admin/signals: evidence (D36)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Header, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.admin.auth import ADMIN_REFUSALS, problem_response, require_admin
from vpx.auth.dependencies import BuyCaller, ManageCaller, ReadCaller
from vpx.db import AppDatabase, WriteSession, get_database
from vpx.deps import AppSettings, Now, mode_part
from vpx.errors import (
    InvalidParameters,
    NotFound,
    problem_responses,
)
from vpx.idempotency.service import run_idempotent
from vpx.money import credits_header
from vpx.signals import purchase as signal_purchase
from vpx.signals import service as signal_service
from vpx.signals.access import KeyAccess
from vpx.signals.evidence import event_from
from vpx.signals.pipeline import ingest_events
from vpx.signals.schemas import (
    IngestResult,
    SignalBatchRequest,
    SignalBatchResponse,
    SignalBatchResult,
    SignalPage,
    SignalPurchase,
    SignalQueryParams,
    SignalStreamParams,
    SignalView,
    SkippedEvent,
)
from vpx.signals.service import SignalFilter
from vpx.signals.sse import stream_response

router = APIRouter(prefix="/api/v1/signals", tags=["signals"])
admin_router = APIRouter(prefix="/api/v1/admin", tags=["admin"])

SignalId = Annotated[str, Path(max_length=40, examples=["sg_4Fq9zK2mX7bT1cYw"], description="`sg_…`")]
MAX_ADMIN_EVENTS = 10_000


@router.get("", response_model=SignalPage, responses=problem_responses(401, 403, 422, 429), summary="Query signals")
async def query_signals(
    params: Annotated[SignalQueryParams, Query()], caller: ReadCaller, database: AppDatabase, settings: AppSettings
) -> SignalPage:
    """Filters alone or combined, `since` (compared with `created_at`), newest first, an opaque
    cursor. Without `source_status`, fcra_blocked signals appear too, reduced to their public fields."""

    # Shared catalogue data, nothing of the account's: a replica may answer (a moment behind).
    async def read(session: AsyncSession) -> SignalPage:
        return await signal_service.query_signals(
            session,
            signal_filter=SignalFilter.of(params.model_dump()),
            limit=params.limit,
            cursor=params.cursor,
            settings=settings,
        )

    return await database.replica_read_session(read)


def _last_event_id(value: str | None) -> int | None:
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    if not text.isascii() or not text.isdigit() or len(text) > 18:
        raise InvalidParameters.field(
            "Last-Event-ID", "must be the id of an event this stream sent (a sequence number)"
        )
    return int(text)


@router.get(
    "/stream",
    response_class=Response,
    responses={
        200: {
            "description": "`text/event-stream`: `id: <sequence>`, `event: signal`, `data: <signal JSON>`; "
            "keep-alive comments at least every 15 s; when the stream's access ends, a last `event: closed` "
            'with `data: {"reason": …, "detail": …}` (`key_revoked`, `ip_not_allowed`, `account_suspended`, '
            "`account_deleted`).",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        **problem_responses(401, 403, 422, 429),
    },
    summary="Stream new signals",
)
async def stream_signals(
    request: Request,
    params: Annotated[SignalStreamParams, Query()],
    caller: ManageCaller,
    settings: AppSettings,
    last_event_id: Annotated[
        str,
        Header(
            alias="Last-Event-ID",
            pattern=r"^[0-9]{1,18}$",
            description="Resume after this event (its `id`, a sequence number): the missed ones come first.",
        ),
    ] = "",
) -> Response:
    """Full Access only. New signals as they are ingested (by any server process), filtered like
    `GET /signals`; fcra_blocked ones only with `source_status=fcra_blocked`, reduced. With
    `Last-Event-ID` the signals missed since that event come first, without gap or repeat. A connection
    ends cleanly after its lifetime (`VPX_STREAM_MAX_SECONDS`); the client reconnects with Last-Event-ID.
    When the key is revoked or the account suspended or deleted while the stream is open, the stream
    ends within seconds with a last `event: closed` whose data names the reason."""
    after = _last_event_id(last_event_id)
    return stream_response(
        broker=mode_part(request, "signal_broker"),
        database=get_database(request),
        settings=settings,
        signal_filter=SignalFilter.of(params.model_dump()),
        last_event_id=after,
        # Re-checked while the stream is open: the key, its allow-list for this address, the account.
        access=KeyAccess(
            key_id=caller.key_id,
            account_id=caller.account_id,
            address=getattr(request.state, "client_address", None),
        ),
    )


@router.post(
    "/batch",
    response_model=SignalBatchResponse,
    responses=problem_responses(400, 401, 403, 413, 422, 429),
    summary="Run several signal queries",
)
async def batch_signals(
    body: SignalBatchRequest, caller: ReadCaller, database: AppDatabase, settings: AppSettings
) -> SignalBatchResponse:
    """Up to 25 queries, each the first page of its query, results in request order."""

    async def read(session: AsyncSession) -> SignalBatchResponse:
        results = []
        for query in body.queries:
            page = await signal_service.query_signals(
                session,
                signal_filter=SignalFilter.of(query.model_dump()),
                limit=body.limit_per_query,
                cursor=None,
                settings=settings,
            )
            results.append(SignalBatchResult(query=query, signals=page.signals))
        return SignalBatchResponse(results=results)

    return await database.replica_read_session(read)


@router.get(
    "/{signal_id}",
    response_model=SignalView,
    responses=problem_responses(401, 403, 404, 422, 429),
    summary="Get a signal",
)
async def get_signal(
    signal_id: SignalId, caller: ReadCaller, database: AppDatabase, settings: AppSettings
) -> SignalView:
    """One signal; an fcra_blocked one reduced to its public fields."""

    async def read(session: AsyncSession) -> SignalView:
        return await signal_service.get_signal(session, signal_id=signal_id, settings=settings)

    try:
        return await database.replica_read_session(read)
    except NotFound:
        if database.replicas is None:
            raise
    # A signal ingested a moment ago (announced by a webhook or the stream) may not have reached the
    # replica yet: the primary decides whether it exists.
    async with database.read_sessions() as session:
        return await read(session)


@router.post(
    "/{signal_id}/purchase",
    response_model=SignalPurchase,
    responses={
        **problem_responses(400, 401, 402, 403, 404, 409, 413, 422, 429),
        **problem_response(
            451,
            "The signal is fcra_blocked (`fcra_blocked`) or its contact is refused by the suppression check "
            "(`suppressed`); nothing charged.",
        ),
    },
    summary="Purchase a signal",
)
async def purchase_signal(
    signal_id: SignalId, request: Request, caller: BuyCaller, session: WriteSession, settings: AppSettings, now: Now
) -> Response:
    """A reveal of the signal's contact at its price tier, with every reveal rule: the suppression
    check, nothing charged for a contact this account revealed before, the ledger, `Idempotency-Key`.
    Credits in `X-Credits-*` headers."""

    async def handler() -> Response:
        outcome = await signal_purchase.purchase_signal(
            session, account_id=caller.account_id, signal_id=signal_id, now=now, settings=settings
        )
        return JSONResponse(
            outcome.body.model_dump(mode="json"),
            headers={
                "X-Credits-Charged": credits_header(outcome.charged),
                "X-Credits-Remaining": credits_header(outcome.remaining),
            },
        )

    return await run_idempotent(request, session, account_id=caller.account_id, handler=handler)


@admin_router.post(
    "/signals",
    response_model=IngestResult,
    responses={
        **problem_responses(400, 413, 422, 429),
        **ADMIN_REFUSALS,
    },
    summary="Ingest evidence events (operators)",
)
async def ingest_evidence(
    request: Request,
    _admin: Annotated[str, Depends(require_admin)],
    events: Annotated[
        list[Any],
        Body(
            max_length=MAX_ADMIN_EVENTS,
            description="Evidence events, each `{category, industry, observed_at, confidence?, topic?, "
            "contact_id? | business, evidence}`. A bad event is reported by its index and skipped.",
        ),
    ],
) -> IngestResult:
    """Evidence events from an operator: each given its intent level, fcra_blocked when its evidence
    holds FCRA-regulated attributes, linked to the catalogue and committed as a signal."""
    state = request.app.state
    parsed = []
    positions: list[int] = []
    skipped: list[SkippedEvent] = []
    for index, raw in enumerate(events):
        try:
            parsed.append(event_from(raw))
            positions.append(index)
        except ValueError as exc:
            skipped.append(SkippedEvent(index=index, reason="invalid_event", message=str(exc)))
    report = await ingest_events(state.database, parsed, settings=state.settings, clock=state.clock)
    skipped += [SkippedEvent(index=positions[s.index], reason=s.reason, message=s.message) for s in report.skipped]
    return IngestResult(
        ingested=report.ingested,
        duplicates=report.duplicates,
        fcra_blocked=report.fcra_blocked,
        contacts_linked=report.contacts_linked,
        contacts_created=report.contacts_created,
        skipped=sorted(skipped, key=lambda s: s.index),
        signal_ids=report.signal_ids,
    )
