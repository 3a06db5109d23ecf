"""What searches remember (vpx.contacts.search.caches): fresh answers, stale answers served while they
are worked out again, forgetting, single flight, and the size bound."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from vpx.contacts.search.caches import AnswerCache


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Source:
    """Answers that change each time they are worked out, and counts how often that happens."""

    def __init__(self) -> None:
        self.calls = 0
        self.gate: asyncio.Event | None = None
        self.fail = False

    async def compute(self, reader: str) -> str:
        self.calls += 1
        if self.gate is not None:
            await self.gate.wait()
        if self.fail:
            raise RuntimeError("the database went away")
        return f"answer {self.calls} via {reader}"


@asynccontextmanager
async def background_reader() -> AsyncIterator[str]:
    yield "background"


async def test_a_fresh_answer_is_not_worked_out_again() -> None:
    clock, source = Clock(), Source()
    cache: AnswerCache[str] = AnswerCache(10, ttl=60, clock=clock)
    assert await cache.get("q", source.compute, "request") == "answer 1 via request"
    clock.now += 59
    assert await cache.get("q", source.compute, "request") == "answer 1 via request"
    assert source.calls == 1


async def test_a_stale_answer_is_served_at_once_and_refreshed_in_the_background() -> None:
    clock, source = Clock(), Source()
    cache: AnswerCache[str] = AnswerCache(10, ttl=60, clock=clock)
    await cache.get("q", source.compute, "request")
    clock.now += 90
    stale = await cache.get("q", source.compute, "request", background=background_reader)
    assert stale == "answer 1 via request"
    await asyncio.gather(*cache.refreshing.values())
    assert await cache.get("q", source.compute, "request") == "answer 2 via background"
    assert source.calls == 2


async def test_without_a_background_reader_a_stale_answer_is_worked_out_in_the_request() -> None:
    clock, source = Clock(), Source()
    cache: AnswerCache[str] = AnswerCache(10, ttl=60, clock=clock)
    await cache.get("q", source.compute, "request")
    clock.now += 61
    assert await cache.get("q", source.compute, "request") == "answer 2 via request"


async def test_an_answer_not_asked_for_in_twice_its_lifetime_is_forgotten() -> None:
    clock, source = Clock(), Source()
    cache: AnswerCache[str] = AnswerCache(10, ttl=60, clock=clock)
    await cache.get("q", source.compute, "request")
    clock.now += 121
    assert await cache.get("q", source.compute, "request", background=background_reader) == "answer 2 via request"


async def test_requests_asking_at_once_share_one_computation() -> None:
    source = Source()
    source.gate = asyncio.Event()
    cache: AnswerCache[str] = AnswerCache(10)
    waiting = [asyncio.create_task(cache.get("q", source.compute, f"request {i}")) for i in range(20)]
    await asyncio.sleep(0)
    source.gate.set()
    answers = await asyncio.gather(*waiting)
    assert source.calls == 1
    assert set(answers) == {"answer 1 via request 0"}


async def test_when_the_shared_computation_fails_the_others_try_themselves() -> None:
    source = Source()
    source.gate = asyncio.Event()
    source.fail = True
    cache: AnswerCache[str] = AnswerCache(10)
    first = asyncio.create_task(cache.get("q", source.compute, "first"))
    await asyncio.sleep(0)
    second = asyncio.create_task(cache.get("q", source.compute, "second"))
    await asyncio.sleep(0)
    source.gate.set()
    with pytest.raises(RuntimeError):
        await first
    source.fail = False  # the database is back for the second attempt
    assert await second == "answer 2 via second"


async def test_a_cancelled_computation_does_not_cancel_the_requests_waiting_for_it() -> None:
    source = Source()
    source.gate = asyncio.Event()
    cache: AnswerCache[str] = AnswerCache(10)
    first = asyncio.create_task(cache.get("q", source.compute, "first"))
    await asyncio.sleep(0)
    second = asyncio.create_task(cache.get("q", source.compute, "second"))
    await asyncio.sleep(0)
    first.cancel()
    await asyncio.sleep(0)
    source.gate.set()
    assert await second == "answer 2 via second"


async def test_the_cache_holds_at_most_its_capacity_in_weight_dropping_the_least_recent() -> None:
    source = Source()
    cache: AnswerCache[str] = AnswerCache(10, weigh=len)
    await cache.get("a", source.compute, "r")  # "answer 1 via r": 14 > 10, not kept
    assert cache.size == 0
    small: AnswerCache[list[int]] = AnswerCache(10, weigh=len)

    async def ids(n: int) -> list[int]:
        return list(range(n))

    for key, n in (("a", 4), ("b", 4)):
        await small.get(key, lambda _r, n=n: ids(n), None)
    await small.get("a", lambda _r: ids(4), None)  # "a" is now the most recent
    await small.get("c", lambda _r: ids(4), None)
    assert list(small.items) == ["a", "c"] and small.size == 8
