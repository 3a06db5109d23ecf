"""The in-memory index of address ranges: which network an address belongs to, by bisection.

Ranges may nest or overlap (an ISP's /16 with a business's /24 inside it; two operators' files). At
build time they are flattened into disjoint segments, each carrying the most specific range over it
(the smallest; of equal sizes, the one given last), so that a lookup is one bisect (three for IPv6)
and never walks a list of candidates.

IPv4 segments live in compact ``array('I')`` columns (4 bytes an address); IPv6 ones in pairs of
``array('Q')`` columns, the high and the low 64 bits (16 bytes an address, where a Python int of 128
bits costs 44 and its list slot 8 more). Identical networks are stored once and segments refer to them
by position: a million ranges of a few thousand networks keep some 17 MB (bench/visitors_lookup.py).
"""

from __future__ import annotations

import heapq
import ipaddress
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, MutableSequence
from dataclasses import dataclass
from typing import Literal, TypeVar

Kind = Literal["business", "isp", "hosting", "unknown"]

MAX_V4 = (1 << 32) - 1
MAX_V6 = (1 << 128) - 1
LOW_BITS = (1 << 64) - 1
Column = TypeVar("Column", bound=MutableSequence[int])
# ::ffff:0:0/96, where IPv6 spells IPv4 addresses: such ranges are indexed as the IPv4 ones they are.
MAPPED_FIRST = 0xFFFF_0000_0000
MAPPED_LAST = MAPPED_FIRST + MAX_V4


@dataclass(frozen=True, slots=True)
class Network:
    """What a range says about the addresses in it."""

    kind: Kind
    source: str  # the import source's name
    domain: str | None = None  # registrable domain of the business (business ranges)
    contact_id: int | None = None  # the business's contact row id (business ranges)
    organisation: str | None = None
    asn: int | None = None


class _Family:
    """IPv4's disjoint segments: ``starts[i]..ends[i]`` belongs to ``networks[which[i]]``."""

    __slots__ = ("ends", "starts", "which")

    def __init__(self, starts: array[int], ends: array[int], which: array[int]) -> None:
        self.starts = starts
        self.ends = ends
        self.which = which

    def __len__(self) -> int:
        return len(self.starts)

    def find(self, value: int) -> int:
        """The position of the network over ``value``, or -1."""
        i = bisect_right(self.starts, value) - 1
        if i >= 0 and value <= self.ends[i]:
            return self.which[i]
        return -1


class _WideFamily:
    """IPv6's disjoint segments, each address split in its high and low 64 bits. Starts sort by
    (high, low): a bisect on the high halves finds the run of starts sharing the value's high half,
    and a bisect of the low halves within that run finds the last start at or below the value."""

    __slots__ = ("end_highs", "end_lows", "start_highs", "start_lows", "which")

    def __init__(self, starts: list[int], ends: list[int], which: array[int]) -> None:
        self.start_highs, self.start_lows = _halves(starts)
        self.end_highs, self.end_lows = _halves(ends)
        self.which = which

    def __len__(self) -> int:
        return len(self.start_highs)

    def find(self, value: int) -> int:
        """The position of the network over ``value``, or -1."""
        high, low = value >> 64, value & LOW_BITS
        run = bisect_left(self.start_highs, high)
        end_of_run = bisect_right(self.start_highs, high, run)
        i = bisect_right(self.start_lows, low, run, end_of_run) - 1  # run - 1 when none in the run
        if i < 0:
            return -1
        end_high = self.end_highs[i]
        if high < end_high or (high == end_high and low <= self.end_lows[i]):
            return self.which[i]
        return -1


def _halves(values: list[int]) -> tuple[array[int], array[int]]:
    return array("Q", [v >> 64 for v in values]), array("Q", [v & LOW_BITS for v in values])


class RangeIndex:
    """Address ranges flattened for lookups in O(log n). Build one with ``RangeIndex.build``."""

    __slots__ = ("_count", "_networks", "_v4", "_v6")

    def __init__(self, v4: _Family, v6: _WideFamily, networks: list[Network], count: int) -> None:
        self._v4 = v4
        self._v6 = v6
        self._networks = networks
        self._count = count

    @classmethod
    def build(cls, ranges: Iterable[tuple[int, int, int, Network]]) -> RangeIndex:
        """(family 4 or 6, first address as int, last address as int inclusive, network). Raises
        ValueError for an unknown family or a range outside its family or reversed. The part of an
        IPv6 range inside ::ffff:0:0/96 is indexed as the IPv4 addresses it spells."""
        positions: dict[Network, int] = {}
        networks: list[Network] = []
        # The same Network object usually comes back many times (the caller interns): recognise it by
        # identity before hashing its six fields. Holding the object keeps its id from being reused.
        seen: dict[int, tuple[Network, int]] = {}
        per_family: tuple[list[tuple[int, int, int, int]], list[tuple[int, int, int, int]]] = ([], [])
        count = 0
        for family, first, last, network in ranges:
            known = seen.get(id(network))
            if known is not None and known[0] is network:
                position = known[1]
            else:
                position = positions.get(network, -1)
                if position < 0:
                    position = positions[network] = len(networks)
                    networks.append(network)
                seen[id(network)] = (network, position)
            if family not in (4, 6):
                raise ValueError(f"address family must be 4 or 6, not {family!r}")
            if not 0 <= first <= last <= (MAX_V4 if family == 4 else MAX_V6):
                raise ValueError(f"not a range of IPv{family} addresses: {first}..{last}")
            # Sorted by start; among ranges that start together, the winner first (smallest, then latest).
            size = last - first
            if family == 4:
                per_family[0].append((first, size, -count, position))
            else:
                if first <= MAPPED_LAST and last >= MAPPED_FIRST:
                    # Its IPv4-mapped part goes in as IPv4: a lookup of ::ffff:a.b.c.d only ever
                    # looks among the IPv4 segments.
                    mapped = max(first, MAPPED_FIRST) - MAPPED_FIRST
                    per_family[0].append((mapped, min(last, MAPPED_LAST) - MAPPED_FIRST - mapped, -count, position))
                if first < MAPPED_FIRST or last > MAPPED_LAST:
                    per_family[1].append((first, size, -count, position))
            count += 1
        typecode = _smallest_typecode(len(networks))
        v4 = _Family(*_flatten(per_family[0], array("I"), array("I"), typecode))
        v6 = _WideFamily(*_flatten(per_family[1], [], [], typecode))
        return cls(v4, v6, networks, count)

    def lookup(self, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> Network | None:
        """The most specific (smallest) range containing the address, or None. An IPv4-mapped IPv6
        address (::ffff:a.b.c.d) is looked up as the IPv4 address."""
        value = int(address)
        if address.version == 4:
            found = self._v4.find(value)
        elif MAPPED_FIRST <= value <= MAPPED_LAST:
            found = self._v4.find(value - MAPPED_FIRST)
        else:
            found = self._v6.find(value)
        return self._networks[found] if found >= 0 else None

    def __len__(self) -> int:
        """How many ranges were given (before flattening)."""
        return self._count

    @property
    def segments(self) -> int:
        """How many disjoint segments the ranges flattened into (what a lookup bisects)."""
        return len(self._v4) + len(self._v6)

    @property
    def networks(self) -> int:
        """How many distinct networks the ranges name."""
        return len(self._networks)


def _smallest_typecode(count: int) -> str:
    return "B" if count <= 0xFF else "H" if count <= 0xFFFF else "I"


def _flatten(
    ranges: list[tuple[int, int, int, int]], starts: Column, ends: Column, typecode: str
) -> tuple[Column, Column, array[int]]:
    """Disjoint segments (``starts``, ``ends``, network positions), each with the most specific range
    over it: a sweep over the ranges sorted by start, keeping the ranges that cover the sweep's position
    in a heap ordered by (size, -order), so the heap's top is the winner. A range that has ended is
    dropped when it comes to the top; one that ended below the top cannot change the winner, so it may
    wait there. Neighbouring segments of one network are merged."""
    ranges.sort()
    which = array(typecode)
    covering: list[tuple[int, int, int, int]] = []  # (size, -order, last, network position)
    push, pop = heapq.heappush, heapq.heappop
    total, i = len(ranges), 0
    position = 0  # the first address not yet assigned to a segment

    def emit(first: int, last: int, network: int) -> None:
        if which and which[-1] == network and ends[-1] + 1 == first:
            ends[-1] = last
        else:
            starts.append(first)
            ends.append(last)
            which.append(network)

    while i < total or covering:
        if not covering:
            position = ranges[i][0]
        while i < total and ranges[i][0] <= position:
            first, size, negative_order, network = ranges[i]
            push(covering, (size, negative_order, first + size, network))
            i += 1
        while covering and covering[0][2] < position:
            pop(covering)
        if not covering:
            continue
        _, _, last, network = covering[0]
        if i < total and ranges[i][0] <= last:
            last = ranges[i][0] - 1
        emit(position, last, network)
        position = last + 1
    return starts, ends, which
