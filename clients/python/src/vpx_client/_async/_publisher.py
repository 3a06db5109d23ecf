"""`client.publisher`: contributing contacts (D17) and the revenue share they earn."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from vpx_client import _policy
from vpx_client._async._pages import by_cursor
from vpx_client._async._transport import AUTO, AsyncTransport
from vpx_client.models import ContributeResult, Contribution, ContributionPage, Earnings


class AsyncPublisher:
    def __init__(self, transport: AsyncTransport) -> None:
        self._t = transport

    async def contribute(
        self, contacts: Sequence[Mapping[str, Any]], *, idempotency_key: str | None = None
    ) -> ContributeResult:
        """1–1,000 contacts, each accepted, a duplicate, or rejected with its field errors."""
        body = {"contacts": [dict(contact) for contact in contacts]}
        return await self._t.call(
            "POST", "/contacts/contribute", ContributeResult, body=body, idempotency_key=idempotency_key or AUTO
        )

    async def contributions(self, *, limit: int | None = None, cursor: str | None = None) -> ContributionPage:
        params = _policy.query(limit=limit, cursor=cursor)
        return await self._t.call("GET", "/publisher/contributions", ContributionPage, params=params)

    def iterate_contributions(self, *, page_size: int = 100) -> AsyncIterator[Contribution]:
        async def page(at: str | None) -> ContributionPage:
            return await self.contributions(limit=page_size, cursor=at)

        return by_cursor(page, lambda p: p.next_cursor, lambda p: p.contributions)

    async def earnings(self) -> Earnings:
        return await self._t.call("GET", "/publisher/earnings", Earnings)
