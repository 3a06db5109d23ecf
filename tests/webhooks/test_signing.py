"""D25: Standard Webhooks signatures, checked with the scheme's reference library."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from vpx.webhooks import events
from vpx.webhooks.signing import SECRET_PREFIX, new_secret, signed_headers

BODY = events.envelope(
    "webhook.test", {"webhook_id": "wh_1", "message": "héllo"}, at=datetime(2026, 11, 22, tzinfo=UTC)
)


def test_signature_verifies_with_the_reference_library() -> None:
    secret = new_secret()
    assert secret.startswith(SECRET_PREFIX)
    headers = signed_headers([secret], message_id="msg_1", at=datetime.now(UTC), body=BODY.encode())
    assert Webhook(secret).verify(BODY.encode(), headers) == {
        "type": "webhook.test",
        "timestamp": "2026-11-22T00:00:00Z",
        "livemode": True,
        "data": {"webhook_id": "wh_1", "message": "héllo"},
    }


@pytest.mark.parametrize("position", [0, len(BODY) // 2, len(BODY) - 1])
def test_one_changed_byte_fails(position: int) -> None:
    secret = new_secret()
    body = BODY.encode()
    headers = signed_headers([secret], message_id="msg_1", at=datetime.now(UTC), body=body)
    tampered = bytearray(body)
    tampered[position] ^= 0x01
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(bytes(tampered), headers)


def test_changed_id_or_other_secret_fails() -> None:
    secret = new_secret()
    headers = signed_headers([secret], message_id="msg_1", at=datetime.now(UTC), body=BODY.encode())
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY.encode(), {**headers, "webhook-id": "msg_2"})
    with pytest.raises(WebhookVerificationError):
        Webhook(new_secret()).verify(BODY.encode(), headers)


def test_stale_timestamp_fails() -> None:
    secret = new_secret()
    stale = datetime.now(UTC) - timedelta(minutes=10)
    headers = signed_headers([secret], message_id="msg_1", at=stale, body=BODY.encode())
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(BODY.encode(), headers)


def test_during_rotation_both_secrets_verify() -> None:
    old, new = new_secret(), new_secret()
    headers = signed_headers([new, old], message_id="msg_1", at=datetime.now(UTC), body=BODY.encode())
    assert headers["webhook-signature"].count("v1,") == 2
    for secret in (old, new):
        Webhook(secret).verify(BODY.encode(), headers)
