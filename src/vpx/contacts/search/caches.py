"""What searches remember in each server process: word corrections, match counts and the first
matches of each query.

A question asked again (the next page, a popular trade in a popular state) then costs one read of
its page's rows by primary key instead of a pass over the full-text index, and every page of one
result set comes from one list of matches, so pages neither overlap nor skip while contacts are
added.

An answer is fresh for ``ttl`` seconds. Asked for after that (and before ``2 × ttl``), it is still
served at once while a background task works it out again, so a popular question never waits on
the index; one not asked for in ``2 × ttl`` is forgotten. New contacts therefore appear in a cached
answer within about ``ttl`` seconds (plus the time to refresh it).
"""

from __future__ import annotations

import asyncio
import logging
import time
from array import array
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

V = TypeVar("V")
R = TypeVar("R")

TTL_SECONDS = 60.0

log = logging.getLogger("vpx.search")


@dataclass(frozen=True)
class Matches:
    """The first matches of one tier of a query, in id order; ``complete`` when they are all of them."""

    ids: array[int]
    complete: bool


@dataclass(frozen=True)
class FirstPage:
    """The first matches of a query in page order (every tier), how many there are in all, and the
    highest contact id when they were read: the kept matches of its later pages stop at that id, so
    contacts added since cannot shift them."""

    ids: array[int]
    total: int
    complete: bool
    horizon: int


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Marks a failed computation's error as seen: its own request raises it already."""
    if not future.cancelled():
        future.exception()


class AnswerCache(Generic[V]):
    """A least-recently-used map of answers, refreshed ahead of expiry (see the module's doc); its
    size is the sum of the entries' weights (1 each unless ``weigh`` says otherwise)."""

    def __init__(
        self,
        capacity: int,
        *,
        ttl: float = TTL_SECONDS,
        weigh: Callable[[V], int] = lambda _: 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.capacity, self.ttl, self.weigh, self.clock = capacity, ttl, weigh, clock
        self.items: OrderedDict[Any, tuple[float, int, V]] = OrderedDict()
        self.size = 0
        self.refreshing: dict[Any, asyncio.Task[None]] = {}
        self.pending: dict[Any, asyncio.Future[V]] = {}

    async def get(
        self,
        key: Any,
        compute: Callable[[R], Awaitable[V]],
        reader: R,
        *,
        background: Callable[[], AbstractAsyncContextManager[R]] | None = None,
    ) -> V:
        """The answer for ``key``: remembered, or ``compute(reader)``. A stale answer is served and,
        when ``background`` gives a reader of its own, recomputed in a task."""
        hit = self.items.get(key)
        if hit is not None:
            age = self.clock() - hit[0]
            if age <= self.ttl:
                self.items.move_to_end(key)
                return hit[2]
            if age <= 2 * self.ttl and background is not None:
                self.items.move_to_end(key)
                if key not in self.refreshing:
                    self.refreshing[key] = asyncio.create_task(self._refresh(key, compute, background))
                return hit[2]
        pending = self.pending.get(key)
        if pending is not None:
            # Single flight: requests asking at once for the same new answer wait for the first.
            try:
                return await asyncio.shield(pending)
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # this request itself was cancelled
            except Exception:
                pass  # the first one failed: try again here
        future: asyncio.Future[V] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_retrieve)
        self.pending[key] = future
        try:
            value = await compute(reader)
        except BaseException as error:
            if isinstance(error, Exception):
                future.set_exception(error)
            else:
                future.cancel()
            raise
        finally:
            if self.pending.get(key) is future:
                del self.pending[key]
        self.put(key, value)
        future.set_result(value)
        return value

    async def _refresh(
        self, key: Any, compute: Callable[[R], Awaitable[V]], background: Callable[[], AbstractAsyncContextManager[R]]
    ) -> None:
        try:
            async with background() as reader:
                self.put(key, await compute(reader))
        except Exception:  # the stale answer stays until it expires; the next request tries again
            log.exception("refreshing a search answer failed")
        finally:
            self.refreshing.pop(key, None)

    def peek(self, key: Any) -> V | None:
        """The remembered answer, fresh or stale, without working anything out."""
        hit = self.items.get(key)
        return hit[2] if hit is not None and self.clock() - hit[0] <= 2 * self.ttl else None

    def put(self, key: Any, value: V) -> None:
        if key in self.items:
            self._drop(key)
        weight = max(1, self.weigh(value))
        if weight > self.capacity:
            return
        self.items[key] = (self.clock(), weight, value)
        self.size += weight
        while self.size > self.capacity:
            self._drop(next(iter(self.items)))

    def clear(self) -> None:
        self.items.clear()
        self.size = 0

    def _drop(self, key: Any) -> None:
        _, weight, _ = self.items.pop(key)
        self.size -= weight
