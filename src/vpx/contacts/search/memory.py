"""What each process remembers between searches: bitmaps by term, each result set's horizon, and
recent answers (vpx.contacts.search.engine keys each by the postings' generation and the changes
waiting, so nothing remembered is ever out of date)."""

from __future__ import annotations

import time
from array import array
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyroaring import BitMap

# Bytes of bitmaps each process remembers (the most used terms: states, common words).
BITMAP_MEMORY = 64 * 1024 * 1024
# How long a result set's horizon is remembered for its later pages.
HORIZON_SECONDS = 300.0


class BitmapMemory:
    """The bitmaps a process remembers, by term (or prefix), each of the generation it was read in;
    at most ``capacity`` bytes, the least recently used forgotten first."""

    def __init__(self, capacity: int = BITMAP_MEMORY) -> None:
        self.capacity = capacity
        self.items: OrderedDict[str, tuple[int, int, BitMap]] = OrderedDict()
        self.size = 0

    def get(self, key: str, generation: int) -> BitMap | None:
        hit = self.items.get(key)
        if hit is None or hit[0] != generation:
            return None
        self.items.move_to_end(key)
        return hit[2]

    def put(self, key: str, generation: int, bitmap: BitMap) -> None:
        statistics = bitmap.get_statistics()
        weight = 64 + (
            statistics["n_bytes_array_containers"]
            + statistics["n_bytes_run_containers"]
            + statistics["n_bytes_bitset_containers"]
        )
        old = self.items.pop(key, None)
        if old is not None:
            self.size -= old[1]
        if weight > self.capacity // 4:
            return
        self.items[key] = (generation, weight, bitmap)
        self.size += weight
        while self.size > self.capacity:
            _, (_, dropped, _) = self.items.popitem(last=False)
            self.size -= dropped


class Horizons:
    """Each recent result set's highest contact id, for its later pages."""

    def __init__(self, capacity: int = 8192, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity, self.clock = capacity, clock
        self.items: OrderedDict[Any, tuple[float, int]] = OrderedDict()

    def get(self, key: Any) -> int | None:
        hit = self.items.get(key)
        if hit is None or self.clock() - hit[0] > HORIZON_SECONDS:
            return None
        return hit[1]

    def put(self, key: Any, horizon: int) -> None:
        self.items.pop(key, None)
        self.items[key] = (self.clock(), horizon)
        while len(self.items) > self.capacity:
            self.items.popitem(last=False)


@dataclass(frozen=True)
class Answer:
    """A question's first matches in page order (at least KEPT_IDS of them), how many there are,
    whether these are all, the highest matching id (its result set's horizon), and the words the
    answer left out (vpx.contacts.search.matching)."""

    ids: array[int]
    total: int
    complete: bool
    highest: int
    dropped: tuple[str, ...] = ()


class Answers:
    """Recent answers, each for the postings' generation and pending changes it was worked out from
    (any change to the catalogue makes a new one): a popular question costs the page's rows only."""

    def __init__(self, capacity: int = 8192) -> None:
        self.capacity = capacity
        self.items: OrderedDict[Any, Answer] = OrderedDict()

    def get(self, key: Any) -> Answer | None:
        hit = self.items.get(key)
        if hit is not None:
            self.items.move_to_end(key)
        return hit

    def put(self, key: Any, answer: Answer) -> None:
        self.items.pop(key, None)
        self.items[key] = answer
        while len(self.items) > self.capacity:
            self.items.popitem(last=False)
