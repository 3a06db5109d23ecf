"""The Standard Webhooks signing scheme (D25): `webhook-id`, `webhook-timestamp` and
`webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed by a `whsec_` secret."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Iterable
from datetime import datetime

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32


def new_secret() -> str:
    """A fresh signing secret, ``whsec_<base64 of 32 random bytes>``."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _key(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix(SECRET_PREFIX))


def signature(secret: str, *, message_id: str, timestamp: int, body: bytes) -> str:
    """One ``v1,<base64>`` signature of a message."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signed_headers(secrets_: Iterable[str], *, message_id: str, at: datetime, body: bytes) -> dict[str, str]:
    """The three headers for one attempt; with several secrets (a rotation) every one signs, space-separated."""
    timestamp = int(at.timestamp())
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(
            signature(secret, message_id=message_id, timestamp=timestamp, body=body) for secret in secrets_
        ),
    }
