# Generated from the async client by clients/python/scripts/unasync.py. Do not edit: regenerate.
"""`client.publisher`: contributing contacts (D17) and the revenue share they earn."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from vpx_client import _policy
from vpx_client._blocking._pages import by_cursor
from vpx_client._blocking._transport import AUTO, Transport
from vpx_client.models import ContributeResult, Contribution, ContributionPage, Earnings


class Publisher:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def contribute(
        self, contacts: Sequence[Mapping[str, Any]], *, idempotency_key: str | None = None
    ) -> ContributeResult:
        """1–1,000 contacts, each accepted, a duplicate, or rejected with its field errors."""
        body = {"contacts": [dict(contact) for contact in contacts]}
        return self._t.call(
            "POST", "/contacts/contribute", ContributeResult, body=body, idempotency_key=idempotency_key or AUTO
        )

    def contributions(self, *, limit: int | None = None, cursor: str | None = None) -> ContributionPage:
        params = _policy.query(limit=limit, cursor=cursor)
        return self._t.call("GET", "/publisher/contributions", ContributionPage, params=params)

    def iterate_contributions(self, *, page_size: int = 100) -> Iterator[Contribution]:
        def page(at: str | None) -> ContributionPage:
            return self.contributions(limit=page_size, cursor=at)

        return by_cursor(page, lambda p: p.next_cursor, lambda p: p.contributions)

    def earnings(self) -> Earnings:
        return self._t.call("GET", "/publisher/earnings", Earnings)
