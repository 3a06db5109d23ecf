"""`vpx_client.webhooks.verify` agrees with the Standard Webhooks reference library, both ways."""

from __future__ import annotations

import base64
import json
import time
from datetime import UTC, datetime

import httpx
import pytest

from vpx_client.webhooks import WebhookVerificationError, sign, verify

standardwebhooks = pytest.importorskip(
    "standardwebhooks.webhooks", reason="the reference library is a server dev extra"
)

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
OTHER = "whsec_" + base64.b64encode(b"o" * 32).decode()
BODY = json.dumps({"type": "contact.revealed", "timestamp": "2026-11-22T10:15:00Z", "data": {"contact_id": "ct_1"}})


def test_what_the_reference_library_signs_verifies() -> None:
    now = datetime.now(UTC)
    signature = standardwebhooks.Webhook(SECRET).sign("msg_1", now, BODY)
    headers = httpx.Headers(
        {"Webhook-Id": "msg_1", "Webhook-Timestamp": str(int(now.timestamp())), "Webhook-Signature": signature}
    )

    event = verify(BODY.encode(), headers, [OTHER, SECRET])

    assert (event.id, event.type, event.data) == ("msg_1", "contact.revealed", {"contact_id": "ct_1"})
    assert event.timestamp == datetime.fromtimestamp(int(now.timestamp()), tz=UTC)


def test_what_this_module_signs_the_reference_library_verifies() -> None:
    stamp = int(time.time())
    headers = {"webhook-id": "msg_2", "webhook-timestamp": str(stamp)}
    headers["webhook-signature"] = (
        f"v1,c2lnbmF0dXJl {sign(BODY.encode(), secret=SECRET, message_id='msg_2', timestamp=stamp)}"
    )

    assert standardwebhooks.Webhook(SECRET).verify(BODY, headers)["type"] == "contact.revealed"
    assert verify(BODY, list(headers.items()), SECRET).id == "msg_2"


@pytest.mark.parametrize(
    ("headers", "secrets", "message"),
    [
        ({"webhook-id": "msg_3"}, SECRET, "missing"),
        ({"webhook-id": "msg_3", "webhook-timestamp": "soon", "webhook-signature": "v1,x"}, SECRET, "Unix seconds"),
        ({"webhook-id": "msg_3", "webhook-timestamp": "NOW", "webhook-signature": "v1,x"}, [], "no secret"),
        ({"webhook-id": "msg_3", "webhook-timestamp": "NOW", "webhook-signature": "v1,x"}, "not-a-secret!", "whsec_"),
        ({"webhook-id": "msg_3", "webhook-timestamp": "NOW", "webhook-signature": "v2,x"}, SECRET, "no valid"),
    ],
)
def test_what_does_not_verify(headers: dict[str, str], secrets: str | list[str], message: str) -> None:
    filled = {k: str(int(time.time())) if v == "NOW" else v for k, v in headers.items()}
    with pytest.raises(WebhookVerificationError, match=message):
        verify(BODY, filled, secrets)
