# Generated from the async client by clients/python/scripts/unasync.py. Do not edit: regenerate.
"""`client.webhooks`: subscriptions, their deliveries, tests and secret rotation (D29).

Verifying a delivery you received is `vpx_client.webhooks.verify` (no client needed)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from vpx_client import _policy
from vpx_client._blocking._pages import by_cursor
from vpx_client._blocking._transport import AUTO, Transport
from vpx_client._meta import ResponseMeta
from vpx_client._policy import UNSET, Unset
from vpx_client._policy import segment as seg
from vpx_client.models import (
    DeliveryPage,
    DeliveryView,
    SecretRotated,
    SignalFilter,
    WebhookCreated,
    WebhookList,
    WebhookView,
)


class Webhooks:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def create(
        self,
        url: str,
        events: Sequence[str],
        *,
        signal_filter: SignalFilter | Mapping[str, Any] | None = None,
        description: str | None = None,
        idempotency_key: str | None = None,
    ) -> WebhookCreated:
        """A subscription; its ``secret`` (`whsec_…`) is in this answer only: keep it to verify."""
        body = _policy.body_of(
            None,
            {
                "url": url,
                "events": list(events),
                "signal_filter": _policy.body_of(signal_filter, {}) if signal_filter is not None else None,
                "description": description,
            },
        )
        return self._t.call(
            "POST", "/webhooks", WebhookCreated, body=body, idempotency_key=idempotency_key or AUTO
        )

    def list(self) -> WebhookList:
        return self._t.call("GET", "/webhooks", WebhookList)

    def get(self, webhook_id: str) -> WebhookView:
        return self._t.call("GET", f"/webhooks/{seg(webhook_id)}", WebhookView)

    def update(
        self,
        webhook_id: str,
        *,
        url: str | Unset = UNSET,
        events: Sequence[str] | Unset = UNSET,
        signal_filter: SignalFilter | Mapping[str, Any] | Unset | None = UNSET,
        description: str | Unset = UNSET,
        status: str | Unset = UNSET,
    ) -> WebhookView:
        """Changes the fields given; ``status="active"`` re-enables a disabled endpoint."""
        body = _policy.changes(
            url=url, events=events, signal_filter=signal_filter, description=description, status=status
        )
        return self._t.call("PATCH", f"/webhooks/{seg(webhook_id)}", WebhookView, body=body)

    def delete(self, webhook_id: str) -> ResponseMeta:
        return self._t.call_empty("DELETE", f"/webhooks/{seg(webhook_id)}")

    def deliveries(
        self, webhook_id: str, *, status: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> DeliveryPage:
        """One page of the endpoint's deliveries, newest first, each with its attempts."""
        params = _policy.query(status=status, limit=limit, cursor=cursor)
        return self._t.call("GET", f"/webhooks/{seg(webhook_id)}/deliveries", DeliveryPage, params=params)

    def iterate_deliveries(
        self, webhook_id: str, *, status: str | None = None, page_size: int = 100
    ) -> Iterator[DeliveryView]:
        def page(at: str | None) -> DeliveryPage:
            return self.deliveries(webhook_id, status=status, limit=page_size, cursor=at)

        return by_cursor(page, lambda p: p.next_cursor, lambda p: p.deliveries)

    def redeliver(self, webhook_id: str, delivery_id: str) -> DeliveryView:
        """Queues the same event (same `webhook-id` and body) again."""
        path = f"/webhooks/{seg(webhook_id)}/deliveries/{seg(delivery_id)}/redeliver"
        return self._t.call("POST", path, DeliveryView)

    def test(self, webhook_id: str) -> DeliveryView:
        """Queues a `webhook.test` event to the endpoint."""
        return self._t.call("POST", f"/webhooks/{seg(webhook_id)}/test", DeliveryView)

    def rotate_secret(self, webhook_id: str, *, grace_hours: int | None = None) -> SecretRotated:
        """A new secret (shown once); the previous one keeps signing beside it for ``grace_hours``."""
        body = _policy.body_of(None, {"grace_hours": grace_hours})
        return self._t.call("POST", f"/webhooks/{seg(webhook_id)}/rotate-secret", SecretRotated, body=body)
