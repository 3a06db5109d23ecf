# Generated from the async client by clients/python/scripts/unasync.py. Do not edit: regenerate.
"""Walking paged lists: by cursor (stopping at the end or at a cursor seen before) and by offset."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from vpx_client._meta import ApiModel, attach

P = TypeVar("P", bound=ApiModel)
T = TypeVar("T", bound=ApiModel)

# The service refuses offsets past this (search's `offset` is 0–10,000).
MAX_OFFSET = 10_000


def by_cursor(
    fetch: Callable[[str | None], P],
    next_cursor: Callable[[P], str | None],
    items: Callable[[P], Sequence[T]],
    *,
    cursor: str | None = None,
) -> Iterator[T]:
    """Every item of every page from ``cursor`` on; each carries its page's response metadata.
    Stops when a page has no next cursor, or names one already followed (a server bug must not
    become an endless loop)."""
    followed: set[str] = set()
    while True:
        page = fetch(cursor)
        for item in items(page):
            attach(item, page.meta)
            yield item
        cursor = next_cursor(page)
        if cursor is None or cursor in followed:
            return
        followed.add(cursor)


def by_offset(
    fetch: Callable[[int], P],
    items: Callable[[P], Sequence[T]],
    total: Callable[[P], int],
    key: Callable[[T], str],
    *,
    offset: int = 0,
) -> Iterator[T]:
    """Every item from ``offset`` to the end of the list (or the service's offset limit); an item seen
    before is not yielded again, and a page with nothing new ends the walk."""
    seen: set[str] = set()
    while offset <= MAX_OFFSET:
        page = fetch(offset)
        found = items(page)
        fresh = [item for item in found if key(item) not in seen]
        for item in fresh:
            seen.add(key(item))
            attach(item, page.meta)
            yield item
        offset += len(found)
        if not fresh or offset >= total(page):
            return
