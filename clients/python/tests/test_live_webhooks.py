"""Webhook deliveries from a live `vpx serve` to a receiver on loopback, verified with
`vpx_client.webhooks.verify`: one secret, both secrets during a rotation, and what must fail."""

from __future__ import annotations

import time

import pytest

from client_support import LiveServer, Receiver
from vpx_client import Client, WebhookVerificationError
from vpx_client.webhooks import verify


def test_deliveries_verify_end_to_end_through_a_secret_rotation(server: LiveServer) -> None:
    client = Client(server.seed.keys["full"], base_url=server.url)
    with Receiver() as receiver:
        hook = client.webhooks.create(f"{receiver.url}/vpx", ["contact.revealed"], description="client tests")
        try:
            client.webhooks.test(hook.id)
            tested = receiver.next()
            event = verify(tested.body, tested.headers, hook.secret)

            contact_id = client.contacts.search("dental", limit=1).contacts[0].id
            client.contacts.reveal(contact_id)
            revealed = receiver.next()
            reveal_event = verify(revealed.body, revealed.headers, [hook.secret])

            rotated = client.webhooks.rotate_secret(hook.id, grace_hours=1)
            client.webhooks.test(hook.id)
            during = receiver.next()
        finally:
            client.webhooks.delete(hook.id)

    assert event.type == "webhook.test" and event.data["webhook_id"] == hook.id
    assert event.id == tested.headers["webhook-id"]
    assert reveal_event.type == "contact.revealed" and reveal_event.data["contact_id"] == contact_id
    # During the rotation both secrets sign: a receiver holding either one, or both, accepts.
    assert len(during.headers["webhook-signature"].split()) == 2
    for secrets in ([rotated.secret], [hook.secret], [rotated.secret, hook.secret]):
        assert verify(during.body, during.headers, secrets).type == "webhook.test"
    with pytest.raises(WebhookVerificationError, match="no valid signature"):
        verify(during.body, during.headers, "whsec_" + "QUJD" * 8)
    with pytest.raises(WebhookVerificationError, match="no valid signature"):
        verify(during.body.replace(b"webhook.test", b"webhook.fake"), during.headers, rotated.secret)
    with pytest.raises(WebhookVerificationError, match="tolerance"):
        verify(during.body, during.headers, rotated.secret, now=time.time() + 600)
    with pytest.raises(WebhookVerificationError, match="tolerance"):
        verify(during.body, during.headers, rotated.secret, now=time.time() - 600)
    assert verify(during.body, during.headers, rotated.secret, now=time.time() + 600, tolerance_seconds=900)
