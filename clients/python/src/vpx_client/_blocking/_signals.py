# Generated from the async client by clients/python/scripts/unasync.py. Do not edit: regenerate.
"""`client.signals`: query, iterate, purchase, batch queries and the live stream."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from vpx_client import _policy
from vpx_client._blocking._pages import by_cursor
from vpx_client._blocking._stream import SignalStream
from vpx_client._blocking._transport import AUTO, Transport
from vpx_client._policy import segment as seg
from vpx_client.models import SignalBatchQuery, SignalBatchResponse, SignalPage, SignalPurchase, SignalView


class Signals:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def list(
        self,
        *,
        category: str | None = None,
        industry: str | None = None,
        intent_level: str | None = None,
        state: str | None = None,
        source_status: str | None = None,
        since: datetime | str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> SignalPage:
        """One page of signals, newest first (D22); ``next_cursor`` leads to the next."""
        params = _policy.query(
            category=category, industry=industry, intent_level=intent_level, state=state,
            source_status=source_status, since=since, limit=limit, cursor=cursor,
        )  # fmt: skip
        return self._t.call("GET", "/signals", SignalPage, params=params)

    def iterate(
        self,
        *,
        category: str | None = None,
        industry: str | None = None,
        intent_level: str | None = None,
        state: str | None = None,
        source_status: str | None = None,
        since: datetime | str | None = None,
        page_size: int = 100,
        cursor: str | None = None,
    ) -> Iterator[SignalView]:
        """Every matching signal, newest first, following the cursors to the end."""

        def page(at: str | None) -> SignalPage:
            return self.list(
                category=category, industry=industry, intent_level=intent_level, state=state,
                source_status=source_status, since=since, limit=page_size, cursor=at,
            )  # fmt: skip

        return by_cursor(page, lambda p: p.next_cursor, lambda p: p.signals, cursor=cursor)

    def get(self, signal_id: str) -> SignalView:
        return self._t.call("GET", f"/signals/{seg(signal_id)}", SignalView)

    def purchase(self, signal_id: str, *, idempotency_key: str | None = None) -> SignalPurchase:
        """Buys the signal's contact at its tier price (D9); sent with an Idempotency-Key."""
        return self._t.call(
            "POST", f"/signals/{seg(signal_id)}/purchase", SignalPurchase, idempotency_key=idempotency_key or AUTO
        )

    def batch(
        self,
        queries: Sequence[SignalBatchQuery | Mapping[str, Any]],
        *,
        limit_per_query: int | None = None,
    ) -> SignalBatchResponse:
        """Up to 25 queries in one call; the answers in request order."""
        body = _policy.body_of(
            None, {"queries": [_policy.body_of(q, {}) for q in queries], "limit_per_query": limit_per_query}
        )
        return self._t.call("POST", "/signals/batch", SignalBatchResponse, body=body)

    def stream(
        self,
        *,
        category: str | None = None,
        industry: str | None = None,
        intent_level: str | None = None,
        state: str | None = None,
        source_status: str | None = None,
        last_event_id: str | int | None = None,
        read_timeout: float = 60.0,
        max_failures: int = 5,
    ) -> SignalStream:
        """New signals as they are ingested (Full Access). Reconnects by itself with `Last-Event-ID`
        and never yields an event twice; ``max_failures`` failed connections in a row raise."""
        params = _policy.query(
            category=category, industry=industry, intent_level=intent_level, state=state, source_status=source_status
        )
        return SignalStream(
            self._t,
            params,
            last_event_id=str(last_event_id) if last_event_id is not None else None,
            read_timeout=read_timeout,
            max_failures=max_failures,
        )
