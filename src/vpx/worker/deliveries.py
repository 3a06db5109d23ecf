"""Delivering the outbox: claim due deliveries under a lease, send each signed attempt, record it.

``claim_deliveries`` is the one place that hands out work. On PostgreSQL it takes rows with
``FOR UPDATE SKIP LOCKED``, so any number of workers claim disjoint sets; on SQLite the write
transaction (BEGIN IMMEDIATE) already serialises claims. A claim is a lease (``leased_until``): a
worker that dies leaves its claims to expire and another worker takes them up (at least once, D26).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime

from sqlalchemy import ColumnElement, insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.accounts.lifecycle import suspended
from vpx.clock import Clock
from vpx.config import Settings
from vpx.db import Database
from vpx.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from vpx.outbound.guard import TargetRefused, check_target
from vpx.outbound.resolver import Resolver
from vpx.secrets import SecretBox, SecretsUnavailable
from vpx.webhooks import service as webhook_service
from vpx.webhooks.sender import ReceiverError, WebhookSender
from vpx.webhooks.signing import signed_headers

log = logging.getLogger("vpx.worker")

MAX_RETRY_AFTER = timedelta(days=1)
USER_AGENT = "vpx-webhooks/1"


@dataclass(frozen=True)
class ClaimedDelivery:
    id: int
    event_id: str
    event_type: str
    endpoint_id: str | None
    url: str
    secrets: tuple[str, ...]
    payload: str
    attempt_count: int


@dataclass(frozen=True)
class AttemptOutcome:
    attempted_at: datetime
    duration_ms: int
    status_code: int | None
    error: str | None
    excerpt: str | None
    retry_after: timedelta | None

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


async def claim_deliveries(
    database: Database, *, box: SecretBox, worker_id: str, now: datetime, limit: int, lease: timedelta
) -> list[ClaimedDelivery]:
    """Leases up to ``limit`` due deliveries to this worker, oldest due first, with their signing
    secrets opened (each sealed secret once per process: ``webhook_service.open_secret``).

    Deliveries whose endpoint has been disabled are cancelled instead of handed out. A delivery whose
    secret none of the keys opens stays leased and returns when the lease ends (the keys may be fixed
    by then); the others go out.
    """
    async with database.write_sessions() as session, session.begin():
        due = (
            select(WebhookDelivery.id)
            .where(
                WebhookDelivery.status == "pending",
                WebhookDelivery.next_attempt_at <= now,
                or_(WebhookDelivery.leased_until.is_(None), WebhookDelivery.leased_until <= now),
                # A suspended account's deliveries wait, their retries unspent, and go out in order
                # when it resumes.
                ~suspended(WebhookDelivery.account_id),
            )
            .order_by(WebhookDelivery.next_attempt_at, WebhookDelivery.id)
            .limit(limit)
        )
        if not database.is_sqlite:
            due = due.with_for_update(skip_locked=True)
        ids = list(await session.scalars(due))
        if not ids:
            return []
        await session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.id.in_(ids))
            .values(leased_until=now + lease, leased_by=worker_id)
            .execution_options(synchronize_session=False)
        )
        rows = (
            await session.execute(
                select(WebhookDelivery, WebhookEndpoint)
                .outerjoin(WebhookEndpoint, WebhookEndpoint.id == WebhookDelivery.endpoint_id)
                .where(WebhookDelivery.id.in_(ids))
                .order_by(WebhookDelivery.next_attempt_at, WebhookDelivery.id)
            )
        ).all()
        claimed: list[ClaimedDelivery] = []
        for delivery, endpoint in rows:
            if (endpoint is None and delivery.url is None) or (endpoint is not None and endpoint.status != "active"):
                delivery.status, delivery.finished_at = "cancelled", now
                delivery.leased_until = delivery.leased_by = None
                continue
            try:
                claimed.append(_claimed(delivery, endpoint, now, box))
            except SecretsUnavailable as exc:
                log.error("cannot sign a delivery: %s", exc, extra={"delivery_id": delivery.id})
        return claimed


def _claimed(
    delivery: WebhookDelivery, endpoint: WebhookEndpoint | None, now: datetime, box: SecretBox
) -> ClaimedDelivery:
    if endpoint is not None:
        url, secrets = endpoint.url, tuple(webhook_service.signing_secrets(endpoint, now, box))
    else:
        assert delivery.url is not None and delivery.secret_sealed is not None
        url, secrets = delivery.url, (webhook_service.open_secret(box, delivery.secret_sealed),)
    return ClaimedDelivery(
        id=delivery.id,
        event_id=delivery.event_id,
        event_type=delivery.event_type,
        endpoint_id=delivery.endpoint_id,
        url=url,
        secrets=secrets,
        payload=delivery.payload,
        attempt_count=delivery.attempt_count,
    )


async def attempt(
    delivery: ClaimedDelivery, *, sender: WebhookSender, settings: Settings, clock: Clock, resolver: Resolver
) -> AttemptOutcome:
    """One signed POST to the checked address; no redirect is followed; a slow receiver times out."""
    attempted_at = clock.now()
    started = time.perf_counter()

    def outcome(
        status: int | None, error: str | None, excerpt: str | None = None, retry_after: timedelta | None = None
    ) -> AttemptOutcome:
        elapsed = int((time.perf_counter() - started) * 1000)
        return AttemptOutcome(attempted_at, elapsed, status, error, excerpt, retry_after)

    try:
        target = await check_target(delivery.url, allow_private=settings.webhook_allow_private, resolver=resolver)
    except TargetRefused as exc:
        return outcome(None, f"address_refused: {exc}"[:500])
    body = delivery.payload.encode()
    headers = signed_headers(delivery.secrets, message_id=delivery.event_id, at=clock.now(), body=body)
    headers["content-type"] = "application/json"
    headers["user-agent"] = USER_AGENT
    try:
        answer = await sender.post(target, headers=headers, body=body, limit_seconds=settings.webhook_timeout_seconds)
    except TimeoutError:
        return outcome(None, f"timeout: no answer within {settings.webhook_timeout_seconds:g} s")
    except ReceiverError as exc:
        return outcome(None, f"connection_error: {exc}"[:500])
    status = answer.status
    error = None
    if 300 <= status < 400:
        error = f"redirect: not followed (Location: {answer.headers.get('location', '')})"[:500]
    elif not 200 <= status < 300:
        error = f"http_error: {status}"
    retry_after = _retry_after(answer.headers, clock.now()) if status in (429, 503) else None
    return outcome(status, error, answer.excerpt, retry_after)


def _retry_after(headers: dict[str, str], now: datetime) -> timedelta | None:
    value = headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isdigit():
        delay = timedelta(seconds=int(value[:9]))
    else:
        try:
            delay = parsedate_to_datetime(value) - now
        except (TypeError, ValueError, IndexError):
            return None
    return max(timedelta(0), min(delay, MAX_RETRY_AFTER))


def next_delay(attempts_made: int, settings: Settings, retry_after: timedelta | None) -> timedelta | None:
    """The wait before the next attempt after ``attempts_made`` failed ones, or None when exhausted.

    A receiver's Retry-After (429, 503) replaces the scheduled wait; jitter spreads the schedule.
    """
    schedule = settings.webhook_retry_schedule
    if attempts_made > len(schedule):
        return None
    if retry_after is not None:
        return retry_after
    jitter = settings.webhook_retry_jitter
    return timedelta(seconds=schedule[attempts_made - 1] * random.uniform(1 - jitter, 1 + jitter))


async def record_outcomes(
    database: Database,
    results: list[tuple[ClaimedDelivery, AttemptOutcome]],
    *,
    worker_id: str,
    settings: Settings,
    clock: Clock,
) -> None:
    """Writes the attempts and moves each delivery on: succeeded, rescheduled, or failed."""
    if not results:
        return
    async with database.write_sessions() as session, session.begin():
        now = clock.now()
        await session.execute(
            insert(WebhookAttempt),
            [
                {
                    "delivery_id": delivery.id,
                    "attempted_at": outcome.attempted_at,
                    "duration_ms": outcome.duration_ms,
                    "status_code": outcome.status_code,
                    "error": outcome.error,
                    "response_excerpt": outcome.excerpt,
                }
                for delivery, outcome in results
            ],
        )
        # The common case, first-time successes, in one statement; the rest one by one.
        first_successes = [d.id for d, o in results if o.succeeded and d.attempt_count == 0]
        if first_successes:
            await session.execute(
                update(WebhookDelivery)
                .where(*_still_ours(worker_id), WebhookDelivery.id.in_(first_successes))
                .values(attempt_count=1, status="succeeded", finished_at=now, leased_until=None, leased_by=None)
                .execution_options(synchronize_session=False)
            )
        for delivery, outcome in results:
            if not (outcome.succeeded and delivery.attempt_count == 0):
                await _record(session, delivery, outcome, worker_id=worker_id, settings=settings, now=now)


def _still_ours(worker_id: str) -> tuple[ColumnElement[bool], ...]:
    # Only while the lease is still ours: a worker whose lease ran out must not undo another's result.
    return (WebhookDelivery.leased_by == worker_id, WebhookDelivery.status == "pending")


async def _record(
    session: AsyncSession,
    delivery: ClaimedDelivery,
    outcome: AttemptOutcome,
    *,
    worker_id: str,
    settings: Settings,
    now: datetime,
) -> None:
    made = delivery.attempt_count + 1
    values: dict[str, object] = {"attempt_count": made, "leased_until": None, "leased_by": None}
    if outcome.succeeded:
        values.update(status="succeeded", finished_at=now)
    elif outcome.status_code == 410:
        values.update(status="failed", finished_at=now)
    else:
        delay = next_delay(made, settings, outcome.retry_after)
        if delay is None:
            values.update(status="failed", finished_at=now)
        else:
            values["next_attempt_at"] = now + delay
    await session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.id == delivery.id, *_still_ours(worker_id))
        .values(**values)
        .execution_options(synchronize_session=False)
    )
    if outcome.status_code == 410 and delivery.endpoint_id is not None:
        await _disable_gone_endpoint(session, delivery.endpoint_id, now)


async def _disable_gone_endpoint(session: AsyncSession, endpoint_id: str, now: datetime) -> None:
    """D26: a 410 Gone means the receiver is gone for good; stop sending to it."""
    await session.execute(
        update(WebhookEndpoint)
        .where(WebhookEndpoint.id == endpoint_id, WebhookEndpoint.status == "active")
        .values(status="disabled", disabled_reason="the receiver answered 410 Gone", updated_at=now)
        .execution_options(synchronize_session=False)
    )
    await webhook_service.cancel_pending(session, endpoint_id=endpoint_id, now=now)
    log.warning("webhook disabled after 410 Gone", extra={"webhook_id": endpoint_id})


async def deliver_due(
    database: Database,
    *,
    box: SecretBox,
    sender: WebhookSender,
    settings: Settings,
    clock: Clock,
    resolver: Resolver,
    worker_id: str,
    limit: int | None = None,
) -> int:
    """One round: claim due deliveries, attempt them concurrently, record the outcomes. Returns how
    many were attempted."""
    claimed = await claim_deliveries(
        database,
        box=box,
        worker_id=worker_id,
        now=clock.now(),
        limit=limit or settings.worker_batch_size,
        lease=timedelta(seconds=settings.worker_lease_seconds),
    )
    await send_claimed(
        database, claimed, sender=sender, settings=settings, clock=clock, resolver=resolver, worker_id=worker_id
    )
    return len(claimed)


async def send_claimed(
    database: Database,
    claimed: list[ClaimedDelivery],
    *,
    sender: WebhookSender,
    settings: Settings,
    clock: Clock,
    resolver: Resolver,
    worker_id: str,
) -> None:
    """Attempts claimed deliveries concurrently and records the outcomes in one transaction."""
    if not claimed:
        return
    outcomes = await asyncio.gather(
        *(attempt(d, sender=sender, settings=settings, clock=clock, resolver=resolver) for d in claimed)
    )
    await record_outcomes(
        database, list(zip(claimed, outcomes, strict=True)), worker_id=worker_id, settings=settings, clock=clock
    )
