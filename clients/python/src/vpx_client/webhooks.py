"""Verifying the service's webhook deliveries (Standard Webhooks, D25).

    event = vpx_client.webhooks.verify(request_body, request_headers, [new_secret, old_secret])

Verify the raw body bytes, before any JSON parsing. During a secret rotation the service signs with
both secrets, and a receiver may hold both: any one valid signature by any one secret passes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

DEFAULT_TOLERANCE_SECONDS = 300


class WebhookVerificationError(ValueError):
    """The delivery is not signed by any of the secrets, or its timestamp is out of tolerance."""


@dataclass(frozen=True)
class WebhookEvent:
    """A verified delivery: ``id`` is the same on every retry and redelivery (drop repeats by it)."""

    id: str
    timestamp: datetime
    type: str
    data: dict[str, Any]
    payload: dict[str, Any]


def verify(
    body: bytes | str,
    headers: Mapping[str, str] | Iterable[tuple[str, str]],
    secrets: str | Iterable[str],
    *,
    tolerance_seconds: float = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> WebhookEvent:
    """Checks a delivery's `webhook-signature` against each secret (`whsec_<base64>`) and its
    `webhook-timestamp` against the clock (± ``tolerance_seconds``); returns the event it carries.
    Raises ``WebhookVerificationError`` otherwise."""
    raw = body.encode() if isinstance(body, str) else bytes(body)
    lowered = _lowered(headers)
    message_id = lowered.get("webhook-id")
    stamp = lowered.get("webhook-timestamp")
    signatures = lowered.get("webhook-signature")
    if not message_id or not stamp or not signatures:
        raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature header")
    try:
        sent_at = int(stamp)
    except ValueError:
        raise WebhookVerificationError(f"webhook-timestamp {stamp!r} is not Unix seconds") from None
    clock = time.time() if now is None else now
    if abs(clock - sent_at) > tolerance_seconds:
        raise WebhookVerificationError(
            f"webhook-timestamp is {clock - sent_at:+.0f} s from this clock (tolerance {tolerance_seconds:g} s)"
        )
    keys = [_key(secret) for secret in ([secrets] if isinstance(secrets, str) else list(secrets))]
    if not keys:
        raise WebhookVerificationError("no secret to verify with")
    signed = message_id.encode() + b"." + stamp.encode() + b"." + raw
    expected = [base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()) for key in keys]
    offered = [part.split(",", 1)[1].encode() for part in signatures.split() if part.startswith("v1,")]
    if not any(hmac.compare_digest(mine, theirs) for mine in expected for theirs in offered):
        raise WebhookVerificationError("no valid signature for any of the secrets")
    try:
        payload = json.loads(raw)
    except ValueError:
        raise WebhookVerificationError("the signed body is not JSON") from None
    if not isinstance(payload, dict):
        raise WebhookVerificationError("the signed body is not a JSON object")
    data = payload.get("data")
    return WebhookEvent(
        id=message_id,
        timestamp=datetime.fromtimestamp(sent_at, tz=UTC),
        type=str(payload.get("type", "")),
        data=data if isinstance(data, dict) else {},
        payload=payload,
    )


def sign(body: bytes, *, secret: str, message_id: str, timestamp: int) -> str:
    """The `webhook-signature` value the service sends for ``body`` (for receivers' own tests)."""
    signed = message_id.encode() + b"." + str(timestamp).encode() + b"." + body
    return "v1," + base64.b64encode(hmac.new(_key(secret), signed, hashlib.sha256).digest()).decode()


def _key(secret: str) -> bytes:
    text = secret.strip().removeprefix("whsec_")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError("a secret is not whsec_<base64>") from None


def _lowered(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, str]:
    items = headers.items() if isinstance(headers, Mapping) else headers
    return {str(name).lower(): str(value) for name, value in items}
