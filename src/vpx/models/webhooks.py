"""Webhook subscriptions, the delivery outbox and each delivery's attempts (D25, D26, D29)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime


class WebhookEndpoint(Base):
    """A subscription: where to send which events of one account, and the secrets that sign them."""

    __tablename__ = "webhook_endpoints"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    url: Mapped[str] = mapped_column(String(2048))
    description: Mapped[str] = mapped_column(String(200), default="")
    # Event types this endpoint receives (D29).
    events: Mapped[list[str]] = mapped_column(JSON, default=list)
    # D22 filters applied to signal.created: category, industry, intent_level, state, source_status.
    signal_filter: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # The signing secret (whsec_…), sealed by vpx.secrets and opened only to sign; shown once, at
    # creation or rotation, never returned again.
    secret_sealed: Mapped[str] = mapped_column(Text)
    # During a rotation the previous secret (sealed) signs next to the new one until this instant.
    previous_secret_sealed: Mapped[str | None] = mapped_column(Text)
    previous_secret_expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    # active, or disabled (by the account, or by the service after a 410 Gone).
    status: Mapped[str] = mapped_column(String(16), default="active")
    disabled_reason: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class WebhookDelivery(Base):
    """The outbox: one event for one target, written in the transaction of the event that causes it.

    A worker claims a due row by setting ``leased_until``; a worker that dies leaves the lease to
    expire and the row returns to the queue (at least once, D26).
    """

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        Index(None, "status", "next_attempt_at"),
        Index(None, "endpoint_id", "id"),
        Index(None, "batch_id"),
    )

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    # The `webhook-id` header: the same on every attempt and every redelivery of this event.
    event_id: Mapped[str] = mapped_column(String(40))
    event_type: Mapped[str] = mapped_column(String(40))
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    # A subscription's delivery, or (endpoint_id NULL) a one-off target such as a batch's webhook_url.
    endpoint_id: Mapped[str | None] = mapped_column(ForeignKey("webhook_endpoints.id", ondelete="CASCADE"))
    url: Mapped[str | None] = mapped_column(String(2048))
    # A one-off target's signing secret (its batch's), sealed like the endpoints' secrets.
    secret_sealed: Mapped[str | None] = mapped_column(Text)
    batch_id: Mapped[str | None] = mapped_column(String(32))
    # The exact body sent on every attempt: {type, timestamp, data} (D25).
    payload: Mapped[str] = mapped_column(Text)
    # pending (queued or being attempted), succeeded, failed (attempts exhausted or 410),
    # cancelled (its endpoint was disabled before it went out).
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempt_count: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UtcDateTime())
    leased_until: Mapped[datetime | None] = mapped_column(UtcDateTime())
    leased_by: Mapped[str | None] = mapped_column(String(64))
    redelivery_of: Mapped[int | None] = mapped_column(BigIntPK)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime())


class WebhookAttempt(Base):
    """One try at a delivery: what the receiver answered, or why there was no answer."""

    __tablename__ = "webhook_attempts"

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    delivery_id: Mapped[int] = mapped_column(ForeignKey("webhook_deliveries.id", ondelete="CASCADE"), index=True)
    attempted_at: Mapped[datetime] = mapped_column(UtcDateTime())
    duration_ms: Mapped[int] = mapped_column(Integer)
    status_code: Mapped[int | None] = mapped_column(Integer)
    # timeout, connection_error, address_refused, redirect, http_error … and a few words.
    error: Mapped[str | None] = mapped_column(String(500))
    response_excerpt: Mapped[str | None] = mapped_column(String(1000))
