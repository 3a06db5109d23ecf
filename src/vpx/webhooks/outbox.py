"""The outbox (D26): deliveries are rows written in the caller's transaction, so an event and its
deliveries commit together or not at all; workers are woken when the transaction commits."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import event, select, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from vpx.db import livemode_of
from vpx.models import WebhookDelivery, WebhookEndpoint
from vpx.webhooks import events
from vpx.webhooks.filters import signal_matches
from vpx.worker import wakeup


async def enqueue_event(
    session: AsyncSession,
    *,
    account_id: str,
    event_type: str,
    data: Mapping[str, Any],
    now: datetime,
) -> list[WebhookDelivery]:
    """Queues one event for every active subscription of the account that asked for its type.

    ``signal.created`` reaches only subscriptions whose signal filter the signal (``data``, a D19
    signal object) passes. Call it inside the transaction of the change the event reports.
    """
    if event_type not in events.ALL_TYPES:
        raise ValueError(f"unknown event type {event_type!r}")
    endpoints = await session.scalars(
        select(WebhookEndpoint)
        .where(WebhookEndpoint.account_id == account_id, WebhookEndpoint.status == "active")
        .order_by(WebhookEndpoint.id)
    )
    targets = [
        e
        for e in endpoints
        if event_type in e.events
        and (event_type != events.SIGNAL_CREATED or signal_matches(e.signal_filter or {}, data))
    ]
    if not targets:
        return []
    event_id = events.new_event_id()
    body = events.envelope(event_type, dict(data), at=now, livemode=livemode_of(session))
    rows = [
        WebhookDelivery(
            event_id=event_id,
            event_type=event_type,
            account_id=account_id,
            endpoint_id=endpoint.id,
            payload=body,
            status="pending",
            attempt_count=0,
            next_attempt_at=now,
            created_at=now,
        )
        for endpoint in targets
    ]
    session.add_all(rows)
    await session.flush()
    await wake_workers_on_commit(session)
    return rows


async def enqueue_to_url(
    session: AsyncSession,
    *,
    account_id: str,
    url: str,
    secret_sealed: str,
    event_type: str,
    data: Mapping[str, Any],
    now: datetime,
    batch_id: str | None = None,
) -> WebhookDelivery:
    """Queues one event for a one-off URL (a batch's ``webhook_url``), signed with the secret sealed
    in ``secret_sealed`` (the caller's own sealed copy: the outbox never holds a secret in clear).

    The URL must have passed ``addresses.check_target`` when it was accepted; it is checked again
    before every attempt.
    """
    row = WebhookDelivery(
        event_id=events.new_event_id(),
        event_type=event_type,
        account_id=account_id,
        url=url,
        secret_sealed=secret_sealed,
        batch_id=batch_id,
        payload=events.envelope(event_type, dict(data), at=now, livemode=livemode_of(session)),
        status="pending",
        attempt_count=0,
        next_attempt_at=now,
        created_at=now,
    )
    session.add(row)
    await session.flush()
    await wake_workers_on_commit(session)
    return row


NOTIFY_CHANNEL = "vpx_webhooks"


async def wake_workers_on_commit(session: AsyncSession) -> None:
    """PostgreSQL delivers a NOTIFY at commit (to `vpx worker` processes anywhere); workers in this
    process are woken by an after-commit hook. A rolled-back transaction wakes nobody. Once per
    transaction, however many events it raises."""
    sync_session = session.sync_session
    if not sync_session.info.get(_LISTENING):
        sync_session.info[_LISTENING] = True
        event.listen(sync_session, "after_commit", _wake_after_commit)
        event.listen(sync_session, "after_rollback", _forget)
    if sync_session.info.get(_PENDING):
        return
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SELECT pg_notify(:channel, '')"), {"channel": NOTIFY_CHANNEL})
    sync_session.info[_PENDING] = True


_LISTENING = "vpx_wake_listening"
_PENDING = "vpx_wake_pending"


def _forget(sync_session: Session) -> None:
    sync_session.info.pop(_PENDING, None)


def _wake_after_commit(sync_session: Session) -> None:
    if sync_session.info.pop(_PENDING, None):
        wakeup.wake()
