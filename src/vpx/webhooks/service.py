"""Webhook subscriptions (D29): create, read, change, delete; deliveries, redelivery, test events and
secret rotation. Other domains raise events with ``enqueue_event`` (re-exported from outbox)."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.accounts import caps
from vpx.config import Settings
from vpx.db import livemode_of
from vpx.errors import Conflict, InvalidParameters, NotFound
from vpx.ids import new_id, parse_number_id, public_number_id
from vpx.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from vpx.outbound.guard import TargetRefused, check_target
from vpx.outbound.resolver import Resolver
from vpx.secrets import SecretBox
from vpx.webhooks import events, signing
from vpx.webhooks.filters import SignalFilter
from vpx.webhooks.outbox import enqueue_event, enqueue_to_url, wake_workers_on_commit

__all__ = ["enqueue_event", "enqueue_to_url"]

MAX_ENDPOINTS_PER_ACCOUNT = 20
# Opened signing secrets kept per process, by sealed value (see open_secret).
OPENED_KEPT = 10_000
_opened: dict[str, str] = {}


def delivery_public_id(delivery_id: int) -> str:
    return public_number_id("dlv", delivery_id)


def open_secret(box: SecretBox, sealed: str) -> str:
    """A sealed signing secret, opened. A worker signs many deliveries per endpoint, and a sealed value
    always opens to the same secret (a new secret is a new sealed value), so each is opened once per
    process. Raises SecretsUnavailable when none of the box's keys opens it."""
    opened = _opened.get(sealed)
    if opened is None:
        if len(_opened) >= OPENED_KEPT:
            _opened.clear()
        opened = _opened[sealed] = box.open(sealed)
    return opened


def signing_secrets(endpoint: WebhookEndpoint, now: datetime, box: SecretBox) -> list[str]:
    """The secrets that sign now, opened: the current one, and the previous one during a rotation."""
    found = [open_secret(box, endpoint.secret_sealed)]
    expires = endpoint.previous_secret_expires_at
    if endpoint.previous_secret_sealed and expires is not None and expires > now:
        found.append(open_secret(box, endpoint.previous_secret_sealed))
    return found


async def accepted_url(url: str, *, settings: Settings, resolver: Resolver, field: str = "url") -> str:
    """The URL when the SSRF guard admits it now; a 422 naming the reason otherwise."""
    try:
        target = await check_target(url, allow_private=settings.webhook_allow_private, resolver=resolver)
    except TargetRefused as exc:
        raise InvalidParameters.field(field, f"refused: {exc}") from None
    return str(target.url)


async def create_endpoint(
    session: AsyncSession,
    *,
    account_id: str,
    url: str,
    event_types: list[str],
    signal_filter: SignalFilter | None,
    description: str,
    now: datetime,
    settings: Settings,
    resolver: Resolver,
    box: SecretBox,
) -> tuple[WebhookEndpoint, str]:
    """A new active subscription and its secret (returned once, stored sealed)."""
    checked = await accepted_url(url, settings=settings, resolver=resolver)
    await caps.count_in_turn(session, account_id)  # two creations at once count one after the other
    count = await session.scalar(
        select(func.count()).select_from(WebhookEndpoint).where(WebhookEndpoint.account_id == account_id)
    )
    if (count or 0) >= MAX_ENDPOINTS_PER_ACCOUNT:
        raise Conflict(f"An account may have at most {MAX_ENDPOINTS_PER_ACCOUNT} webhooks; delete one first.")
    secret = signing.new_secret()
    endpoint = WebhookEndpoint(
        id=new_id("wh"),
        account_id=account_id,
        url=checked,
        description=description,
        events=list(event_types),
        signal_filter=(signal_filter or SignalFilter()).model_dump(exclude_none=True),
        secret_sealed=box.seal(secret),
        status="active",
        created_at=now,
        updated_at=now,
    )
    session.add(endpoint)
    await session.flush()
    return endpoint, secret


async def list_endpoints(session: AsyncSession, *, account_id: str) -> list[WebhookEndpoint]:
    rows = await session.scalars(
        select(WebhookEndpoint).where(WebhookEndpoint.account_id == account_id).order_by(WebhookEndpoint.created_at)
    )
    return list(rows)


async def get_endpoint(session: AsyncSession, *, account_id: str, endpoint_id: str) -> WebhookEndpoint:
    """The account's endpoint; 404 for unknown ids and for endpoints of other accounts (D2)."""
    endpoint = await session.get(WebhookEndpoint, endpoint_id) if len(endpoint_id) <= 32 else None
    if endpoint is None or endpoint.account_id != account_id:
        raise NotFound(f"No webhook {endpoint_id}.")
    return endpoint


async def update_endpoint(
    session: AsyncSession,
    *,
    account_id: str,
    endpoint_id: str,
    changes: dict[str, Any],
    now: datetime,
    settings: Settings,
    resolver: Resolver,
) -> WebhookEndpoint:
    endpoint = await get_endpoint(session, account_id=account_id, endpoint_id=endpoint_id)
    if changes.get("url") is not None:
        endpoint.url = await accepted_url(changes["url"], settings=settings, resolver=resolver)
    if changes.get("events") is not None:
        endpoint.events = list(changes["events"])
    if "signal_filter" in changes:
        endpoint.signal_filter = dict(changes["signal_filter"] or {})
    if changes.get("description") is not None:
        endpoint.description = changes["description"]
    status = changes.get("status")
    if status == "active":
        endpoint.status, endpoint.disabled_reason = "active", None
    elif status == "disabled" and endpoint.status != "disabled":
        endpoint.status, endpoint.disabled_reason = "disabled", "disabled by the account"
        await cancel_pending(session, endpoint_id=endpoint.id, now=now)
    endpoint.updated_at = now
    await session.flush()
    return endpoint


async def delete_endpoint(session: AsyncSession, *, account_id: str, endpoint_id: str) -> None:
    """Removes the subscription with its deliveries and their attempts."""
    endpoint = await get_endpoint(session, account_id=account_id, endpoint_id=endpoint_id)
    await session.delete(endpoint)
    await session.flush()


async def rotate_secret(
    session: AsyncSession,
    *,
    account_id: str,
    endpoint_id: str,
    grace_hours: int | None,
    now: datetime,
    settings: Settings,
    box: SecretBox,
) -> tuple[WebhookEndpoint, str]:
    """A new secret (returned once, stored sealed); the previous one keeps signing beside it for the
    grace period."""
    endpoint = await get_endpoint(session, account_id=account_id, endpoint_id=endpoint_id)
    hours = settings.webhook_secret_grace_hours if grace_hours is None else grace_hours
    secret = signing.new_secret()
    if hours > 0:
        endpoint.previous_secret_sealed = endpoint.secret_sealed
        endpoint.previous_secret_expires_at = now + timedelta(hours=hours)
    else:
        endpoint.previous_secret_sealed, endpoint.previous_secret_expires_at = None, None
    endpoint.secret_sealed = box.seal(secret)
    endpoint.updated_at = now
    await session.flush()
    return endpoint, secret


async def send_test(session: AsyncSession, *, account_id: str, endpoint_id: str, now: datetime) -> WebhookDelivery:
    """Queues a ``webhook.test`` event for this endpoint, whatever event types it asked for."""
    endpoint = await get_endpoint(session, account_id=account_id, endpoint_id=endpoint_id)
    _require_active(endpoint)
    delivery = WebhookDelivery(
        event_id=events.new_event_id(),
        event_type=events.WEBHOOK_TEST,
        account_id=account_id,
        endpoint_id=endpoint.id,
        payload=events.envelope(
            events.WEBHOOK_TEST,
            {"webhook_id": endpoint.id, "message": "A test event from vpx: your endpoint receives deliveries."},
            at=now,
            livemode=livemode_of(session),
        ),
        status="pending",
        attempt_count=0,
        next_attempt_at=now,
        created_at=now,
    )
    session.add(delivery)
    await session.flush()
    await wake_workers_on_commit(session)
    return delivery


def _require_active(endpoint: WebhookEndpoint) -> None:
    if endpoint.status != "active":
        raise Conflict(f"Webhook {endpoint.id} is disabled ({endpoint.disabled_reason}); re-enable it first.")


async def redeliver(
    session: AsyncSession, *, account_id: str, endpoint_id: str, delivery_id: str, now: datetime
) -> WebhookDelivery:
    """Queues the same event again (same ``webhook-id`` and body) as a new delivery with a fresh schedule."""
    endpoint = await get_endpoint(session, account_id=account_id, endpoint_id=endpoint_id)
    original = await _delivery_of(session, endpoint, delivery_id)
    _require_active(endpoint)
    again = WebhookDelivery(
        event_id=original.event_id,
        event_type=original.event_type,
        account_id=account_id,
        endpoint_id=endpoint.id,
        payload=original.payload,
        status="pending",
        attempt_count=0,
        next_attempt_at=now,
        redelivery_of=original.id,
        created_at=now,
    )
    session.add(again)
    await session.flush()
    await wake_workers_on_commit(session)
    return again


async def _delivery_of(session: AsyncSession, endpoint: WebhookEndpoint, delivery_id: str) -> WebhookDelivery:
    number = parse_number_id("dlv", delivery_id)
    delivery = await session.get(WebhookDelivery, number) if number is not None else None
    if delivery is None or delivery.endpoint_id != endpoint.id:
        raise NotFound(f"No delivery {delivery_id} for webhook {endpoint.id}.")
    return delivery


async def get_delivery(
    session: AsyncSession, *, account_id: str, endpoint_id: str, delivery_id: str
) -> WebhookDelivery:
    endpoint = await get_endpoint(session, account_id=account_id, endpoint_id=endpoint_id)
    return await _delivery_of(session, endpoint, delivery_id)


async def list_deliveries(
    session: AsyncSession,
    *,
    account_id: str,
    endpoint_id: str,
    status: str | None,
    limit: int,
    before_id: int | None,
) -> list[WebhookDelivery]:
    """Newest first."""
    endpoint = await get_endpoint(session, account_id=account_id, endpoint_id=endpoint_id)
    query = select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint.id)
    if status is not None:
        query = query.where(WebhookDelivery.status == status)
    if before_id is not None:
        query = query.where(WebhookDelivery.id < before_id)
    return list(await session.scalars(query.order_by(WebhookDelivery.id.desc()).limit(limit)))


async def attempts_of(session: AsyncSession, delivery_ids: list[int]) -> dict[int, list[WebhookAttempt]]:
    found: dict[int, list[WebhookAttempt]] = defaultdict(list)
    if delivery_ids:
        rows = await session.scalars(
            select(WebhookAttempt)
            .where(WebhookAttempt.delivery_id.in_(delivery_ids))
            .order_by(WebhookAttempt.delivery_id, WebhookAttempt.id)
        )
        for attempt in rows:
            found[attempt.delivery_id].append(attempt)
    return found


async def cancel_pending(session: AsyncSession, *, endpoint_id: str, now: datetime) -> None:
    """Deliveries still queued for an endpoint that stopped receiving (410, or disabled)."""
    await session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.endpoint_id == endpoint_id, WebhookDelivery.status == "pending")
        .values(status="cancelled", finished_at=now, leased_until=None, leased_by=None)
        .execution_options(synchronize_session=False)
    )
