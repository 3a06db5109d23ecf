"""The webhook management resources (D29)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from vpx.fields import SingleLine, TrimmedModel
from vpx.webhooks.events import SUBSCRIBABLE
from vpx.webhooks.filters import SignalFilter

EventType = Literal[
    "contact.revealed",
    "batch_reveal.completed",
    "signal.created",
    "auto_buy.purchased",
    "enrichment.completed",
    "visitor.identified",
    "sequence.step_sent",
    "sequence.replied",
    "sequence.bounced",
    "sequence.unsubscribed",
    "sequence.finished",
    "contact.suppressed",
    "contact.corrected",
]
assert set(EventType.__args__) == set(SUBSCRIBABLE)  # type: ignore[attr-defined]


def _distinct(events: list[EventType]) -> list[EventType]:
    return list(dict.fromkeys(events))


class WebhookCreate(TrimmedModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    url: str = Field(max_length=2048, examples=["https://example.com/hooks/vpx"], description="https, public address.")
    events: list[EventType] = Field(min_length=1, max_length=20)
    signal_filter: SignalFilter | None = Field(
        default=None, description="Applies to `signal.created`: the filters of `GET /signals`."
    )
    description: SingleLine = Field(default="", max_length=200)

    _events = field_validator("events")(_distinct)


class WebhookUpdate(TrimmedModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    url: str | None = Field(default=None, max_length=2048)
    events: list[EventType] | None = Field(default=None, min_length=1, max_length=20)
    signal_filter: SignalFilter | None = None
    description: SingleLine | None = Field(default=None, max_length=200)
    status: Literal["active", "disabled"] | None = Field(
        default=None, description="`active` re-enables an endpoint the service disabled after a 410."
    )

    @field_validator("events")
    @classmethod
    def _events(cls, value: list[EventType] | None) -> list[EventType] | None:
        return None if value is None else _distinct(value)


class WebhookView(BaseModel):
    id: str = Field(examples=["wh_3kTz9aQ1xYb2LmN0"])
    url: str
    events: list[str]
    signal_filter: SignalFilter
    description: str
    status: Literal["active", "disabled"]
    disabled_reason: str | None
    secret_rotating_until: datetime | None = Field(description="While set, the previous secret signs too.")
    livemode: bool = Field(
        description="False for a subscription made with a test key: it receives test mode's events, each with "
        "`livemode: false`."
    )
    created_at: datetime
    updated_at: datetime


class WebhookCreated(WebhookView):
    secret: str = Field(description="`whsec_…`; shown once. Verify signatures with it (Standard Webhooks).")


class WebhookList(BaseModel):
    webhooks: list[WebhookView]


class SecretRotation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    grace_hours: int | None = Field(
        default=None, ge=0, le=720, description="How long the previous secret keeps signing (default 24)."
    )


class SecretRotated(BaseModel):
    id: str
    secret: str = Field(description="The new `whsec_…` secret; shown once.")
    previous_secret_expires_at: datetime | None


class AttemptView(BaseModel):
    attempted_at: datetime
    duration_ms: int
    status_code: int | None
    error: str | None
    response_excerpt: str | None


class DeliveryView(BaseModel):
    id: str = Field(examples=["dlv_42"])
    webhook_id: str | None
    event_id: str = Field(description="The `webhook-id` header; the same on every attempt and redelivery.")
    event_type: str
    status: Literal["pending", "succeeded", "failed", "cancelled"]
    attempt_count: int
    next_attempt_at: datetime | None
    created_at: datetime
    finished_at: datetime | None
    redelivery_of: str | None
    attempts: list[AttemptView]


class DeliveryPage(BaseModel):
    deliveries: list[DeliveryView]
    limit: int
    next_cursor: str | None
