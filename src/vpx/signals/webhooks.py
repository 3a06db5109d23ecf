"""The ``signal.created`` ingest hook (D29): one outbox event per new signal for every account whose
active subscription asks for the type and whose signal filter the signal passes — never an
fcra_blocked signal unless the filter asks for ``source_status=fcra_blocked`` (D19)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.db import livemode_of
from vpx.models import WebhookDelivery, WebhookEndpoint
from vpx.signals.records import SignalRecord
from vpx.webhooks import events as webhook_events
from vpx.webhooks import outbox as webhook_outbox
from vpx.webhooks.filters import signal_matches

if TYPE_CHECKING:
    from vpx.signals.hook_context import HookContext


async def enqueue_signal_created(session: AsyncSession, signals: Sequence[SignalRecord], context: HookContext) -> None:
    from vpx.signals import service as signal_service

    endpoints = [
        e
        for e in await session.scalars(
            select(WebhookEndpoint).where(WebhookEndpoint.status == "active").order_by(WebhookEndpoint.id)
        )
        if webhook_events.SIGNAL_CREATED in (e.events or [])
    ]
    if not endpoints:
        return
    views = await signal_service.views_of(session, signals, context.settings)
    rows: list[WebhookDelivery] = []
    for view in views:
        # The reduced view for fcra_blocked signals: what a subscriber that asked for them may see.
        data = view.model_dump(mode="json")
        event_ids: dict[str, str] = {}
        for endpoint in endpoints:
            if not signal_matches(endpoint.signal_filter or {}, data):
                continue
            event_id = event_ids.setdefault(endpoint.account_id, webhook_events.new_event_id())
            rows.append(
                WebhookDelivery(
                    event_id=event_id,
                    event_type=webhook_events.SIGNAL_CREATED,
                    account_id=endpoint.account_id,
                    endpoint_id=endpoint.id,
                    payload=webhook_events.envelope(
                        webhook_events.SIGNAL_CREATED, data, at=context.now, livemode=livemode_of(session)
                    ),
                    status="pending",
                    attempt_count=0,
                    next_attempt_at=context.now,
                    created_at=context.now,
                )
            )
    if rows:
        session.add_all(rows)
        await session.flush()
        await webhook_outbox.wake_workers_on_commit(session)
