"""/api/v1/webhooks: subscriptions, their deliveries, redelivery, test events, secret rotation (D29).
Full Access only (D4)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from sqlalchemy.orm import object_session

from vpx.auth.dependencies import ManageCaller
from vpx.cursors import decode_cursor, encode_cursor
from vpx.db import ReadSession, WriteSession
from vpx.deps import AppSettings, Now
from vpx.errors import problem_responses
from vpx.idempotency.service import run_idempotent
from vpx.ids import public_number_id
from vpx.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from vpx.outbound.resolver import Resolver
from vpx.secrets import SecretBox
from vpx.webhooks import service as webhook_service
from vpx.webhooks.filters import SignalFilter
from vpx.webhooks.schemas import (
    AttemptView,
    DeliveryPage,
    DeliveryView,
    SecretRotated,
    SecretRotation,
    WebhookCreate,
    WebhookCreated,
    WebhookList,
    WebhookUpdate,
    WebhookView,
)

router = APIRouter(prefix="/api/v1/webhooks", tags=["webhooks"])

WebhookId = Annotated[str, Path(max_length=40, examples=["wh_3kTz9aQ1xYb2LmN0"])]
DeliveryId = Annotated[str, Path(max_length=40, examples=["dlv_42"])]
READ_ERRORS = problem_responses(401, 403, 404, 422, 429)
WRITE_ERRORS = problem_responses(400, 401, 403, 404, 409, 413, 422, 429)


def _resolver(request: Request) -> Resolver:
    resolver: Resolver = request.app.state.webhook_resolver
    return resolver


def _box(request: Request) -> SecretBox:
    box: SecretBox = request.app.state.secrets
    return box


def _livemode(endpoint: WebhookEndpoint) -> bool:
    """False for a subscription of test mode: it was read from the sandbox's session (vpx.sandbox)."""
    session = object_session(endpoint)
    return session is None or bool(session.info.get("livemode", True))


def view(endpoint: WebhookEndpoint) -> WebhookView:
    return WebhookView(
        id=endpoint.id,
        url=endpoint.url,
        events=list(endpoint.events),
        signal_filter=SignalFilter(**(endpoint.signal_filter or {})),
        description=endpoint.description,
        status="active" if endpoint.status == "active" else "disabled",
        disabled_reason=endpoint.disabled_reason,
        secret_rotating_until=endpoint.previous_secret_expires_at if endpoint.previous_secret_sealed else None,
        livemode=_livemode(endpoint),
        created_at=endpoint.created_at,
        updated_at=endpoint.updated_at,
    )


def delivery_view(delivery: WebhookDelivery, attempts: list[WebhookAttempt]) -> DeliveryView:
    return DeliveryView(
        id=webhook_service.delivery_public_id(delivery.id),
        webhook_id=delivery.endpoint_id,
        event_id=delivery.event_id,
        event_type=delivery.event_type,
        status=delivery.status,
        attempt_count=delivery.attempt_count,
        next_attempt_at=delivery.next_attempt_at if delivery.status == "pending" else None,
        created_at=delivery.created_at,
        finished_at=delivery.finished_at,
        redelivery_of=public_number_id("dlv", delivery.redelivery_of) if delivery.redelivery_of else None,
        attempts=[
            AttemptView(
                attempted_at=a.attempted_at,
                duration_ms=a.duration_ms,
                status_code=a.status_code,
                error=a.error,
                response_excerpt=a.response_excerpt,
            )
            for a in attempts
        ],
    )


@router.post(
    "",
    status_code=201,
    response_model=WebhookCreated,
    responses=WRITE_ERRORS,
    summary="Create a webhook subscription",
)
async def create_webhook(
    body: WebhookCreate,
    request: Request,
    caller: ManageCaller,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
) -> Response:
    """The URL must be https and resolve to public addresses. The secret is shown once. Accepts
    `Idempotency-Key`: a repeat with the same key and body within 24 hours returns the first response."""

    async def handler() -> Response:
        endpoint, secret = await webhook_service.create_endpoint(
            session,
            account_id=caller.account_id,
            url=body.url,
            event_types=list(body.events),
            signal_filter=body.signal_filter,
            description=body.description,
            now=now,
            settings=settings,
            resolver=_resolver(request),
            box=_box(request),
        )
        created = WebhookCreated(**view(endpoint).model_dump(), secret=secret)
        return JSONResponse(
            created.model_dump(mode="json"), status_code=201, headers={"Location": f"{router.prefix}/{endpoint.id}"}
        )

    # A repeat gets the same response, secret included; what is kept for it is sealed.
    return await run_idempotent(request, session, account_id=caller.account_id, handler=handler, seal_stored=True)


@router.get("", response_model=WebhookList, responses=problem_responses(401, 403, 429), summary="List webhooks")
async def list_webhooks(caller: ManageCaller, session: ReadSession) -> WebhookList:
    endpoints = await webhook_service.list_endpoints(session, account_id=caller.account_id)
    return WebhookList(webhooks=[view(e) for e in endpoints])


@router.get("/{webhook_id}", response_model=WebhookView, responses=READ_ERRORS, summary="Get a webhook")
async def get_webhook(webhook_id: WebhookId, caller: ManageCaller, session: ReadSession) -> WebhookView:
    return view(await webhook_service.get_endpoint(session, account_id=caller.account_id, endpoint_id=webhook_id))


@router.patch("/{webhook_id}", response_model=WebhookView, responses=WRITE_ERRORS, summary="Change a webhook")
async def update_webhook(
    webhook_id: WebhookId,
    body: WebhookUpdate,
    request: Request,
    caller: ManageCaller,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
) -> WebhookView:
    """Change the URL (checked again), event types, signal filter, description, or status; `active`
    re-enables an endpoint disabled after a 410. Disabling cancels its queued deliveries."""
    changes = body.model_dump(exclude_unset=True)
    if body.signal_filter is not None:
        changes["signal_filter"] = body.signal_filter.model_dump(exclude_none=True)
    endpoint = await webhook_service.update_endpoint(
        session,
        account_id=caller.account_id,
        endpoint_id=webhook_id,
        changes=changes,
        now=now,
        settings=settings,
        resolver=_resolver(request),
    )
    return view(endpoint)


@router.delete(
    "/{webhook_id}", status_code=204, responses=problem_responses(401, 403, 404, 422, 429), summary="Delete a webhook"
)
async def delete_webhook(webhook_id: WebhookId, caller: ManageCaller, session: WriteSession) -> Response:
    """Deletes the subscription, its queued deliveries and its delivery log."""
    await webhook_service.delete_endpoint(session, account_id=caller.account_id, endpoint_id=webhook_id)
    return Response(status_code=204)


@router.get(
    "/{webhook_id}/deliveries",
    response_model=DeliveryPage,
    responses=READ_ERRORS,
    summary="List a webhook's deliveries",
)
async def list_deliveries(
    webhook_id: WebhookId,
    caller: ManageCaller,
    session: ReadSession,
    status: Annotated[Literal["pending", "succeeded", "failed", "cancelled"] | None, Query()] = None,
    limit: Annotated[int, Query(ge=1, le=100, description="Page size, 1–100.")] = 25,
    cursor: Annotated[str | None, Query(max_length=100, description="From a previous page.")] = None,
) -> DeliveryPage:
    """Newest first, each with every attempt: when, the status code or error, and the time taken."""
    before = decode_cursor(cursor, "deliveries") if cursor else None
    rows = await webhook_service.list_deliveries(
        session,
        account_id=caller.account_id,
        endpoint_id=webhook_id,
        status=status,
        limit=limit + 1,
        before_id=before,
    )
    more = len(rows) > limit
    rows = rows[:limit]
    attempts = await webhook_service.attempts_of(session, [r.id for r in rows])
    return DeliveryPage(
        deliveries=[delivery_view(r, attempts.get(r.id, [])) for r in rows],
        limit=limit,
        next_cursor=encode_cursor("deliveries", rows[-1].id) if more and rows else None,
    )


@router.post(
    "/{webhook_id}/deliveries/{delivery_id}/redeliver",
    status_code=202,
    response_model=DeliveryView,
    responses=problem_responses(401, 403, 404, 409, 422, 429),
    summary="Send a delivery again",
)
async def redeliver(
    webhook_id: WebhookId,
    delivery_id: DeliveryId,
    caller: ManageCaller,
    session: WriteSession,
    now: Now,
) -> DeliveryView:
    """Queues the same event (same `webhook-id`, same body) as a new delivery with a fresh retry schedule."""
    again = await webhook_service.redeliver(
        session, account_id=caller.account_id, endpoint_id=webhook_id, delivery_id=delivery_id, now=now
    )
    return delivery_view(again, [])


@router.post(
    "/{webhook_id}/test",
    status_code=202,
    response_model=DeliveryView,
    responses=problem_responses(401, 403, 404, 409, 422, 429),
    summary="Send a test event",
)
async def send_test(webhook_id: WebhookId, caller: ManageCaller, session: WriteSession, now: Now) -> DeliveryView:
    """Queues a `webhook.test` event to this endpoint; follow it in the deliveries log."""
    delivery = await webhook_service.send_test(session, account_id=caller.account_id, endpoint_id=webhook_id, now=now)
    return delivery_view(delivery, [])


@router.post(
    "/{webhook_id}/rotate-secret",
    response_model=SecretRotated,
    responses=WRITE_ERRORS,
    summary="Rotate the signing secret",
)
async def rotate_secret(
    webhook_id: WebhookId,
    request: Request,
    caller: ManageCaller,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
    body: SecretRotation | None = None,
) -> SecretRotated:
    """A new secret, shown once; during the grace period (default 24 h) both secrets sign each delivery
    (two `v1,` signatures), so receivers can switch without losing a message."""
    endpoint, secret = await webhook_service.rotate_secret(
        session,
        account_id=caller.account_id,
        endpoint_id=webhook_id,
        grace_hours=body.grace_hours if body else None,
        now=now,
        settings=settings,
        box=_box(request),
    )
    return SecretRotated(id=endpoint.id, secret=secret, previous_secret_expires_at=endpoint.previous_secret_expires_at)
