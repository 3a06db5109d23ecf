# Generated from the async client by clients/python/scripts/unasync.py. Do not edit: regenerate.
"""`client.suppressions`: the contacts this account revealed that were suppressed since (delete your copies)."""

from __future__ import annotations

from collections.abc import Iterator

from vpx_client import _policy
from vpx_client._blocking._pages import by_cursor
from vpx_client._blocking._transport import Transport
from vpx_client.models import SuppressedContact, SuppressionFeed


class Suppressions:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def feed(self, *, limit: int | None = None, cursor: str | None = None) -> SuppressionFeed:
        """One page, newest first: each item's contact id, reason class and when it was suppressed."""
        params = _policy.query(limit=limit, cursor=cursor)
        return self._t.call("GET", "/suppressions/feed", SuppressionFeed, params=params)

    def iterate_feed(self, *, page_size: int = 100, cursor: str | None = None) -> Iterator[SuppressedContact]:
        """Every item of the feed from ``cursor`` on (newest first), page after page."""

        def page(at: str | None) -> SuppressionFeed:
            return self.feed(limit=page_size, cursor=at)

        return by_cursor(page, lambda p: p.next_cursor, lambda p: p.suppressions, cursor=cursor)
