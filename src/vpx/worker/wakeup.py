"""Waking idle workers of this process at once when work is committed (the poll is the fallback)."""

from __future__ import annotations

import asyncio

_waiters: dict[asyncio.Event, asyncio.AbstractEventLoop] = {}


def register() -> asyncio.Event:
    """An event set whenever work is committed in this process; wait on it, then clear it."""
    event = asyncio.Event()
    _waiters[event] = asyncio.get_running_loop()
    return event


def unregister(event: asyncio.Event) -> None:
    _waiters.pop(event, None)


def wake() -> None:
    try:
        current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        current = None
    for event, loop in list(_waiters.items()):
        if loop is current:
            event.set()
        elif not loop.is_closed():
            loop.call_soon_threadsafe(event.set)
