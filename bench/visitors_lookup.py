"""Visitor address lookups in the in-memory range index (D33) at 1,000,000 ranges: build time, memory,
lookup latency and throughput on one core, next to a naive scan. Goals: p99 ≤ 50 µs; ≥ 200,000
lookups/s.

The ranges are synthetic, shaped like an ASN file plus an operator's business file: ~85 % IPv4
networks of /16 to /28 (a tenth of them nested inside another), ~15 % IPv6 /32 to /48, a few thousand
business /24 to /29 ranges inside ISP ranges; some 4,000 networks shared by many ranges.

    python -m bench.visitors_lookup [--ranges 1000000] [--lookups 200000]
"""

from __future__ import annotations

import argparse
import gc
import ipaddress
import random
import time
import tracemalloc
from pathlib import Path

from bench.common import percentile
from vpx.visitors.ranges import Kind, Network, RangeIndex

Range = tuple[int, int, int, Network]
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
GOAL_P99_US = 50.0
GOAL_PER_SECOND = 200_000
BASELINE_RANGES = 10_000
BASELINE_LOOKUPS = 1_000


def synthetic_ranges(count: int, rng: random.Random) -> list[Range]:
    kinds: tuple[Kind, ...] = ("isp", "isp", "hosting", "unknown", "unknown")
    shared = [
        Network(kinds[n % len(kinds)], "bench-asn", organisation=f"Network {n}", asn=64496 + n) for n in range(4000)
    ]
    businesses = min(5000, max(1, count // 200))
    ranges: list[Range] = []
    isp_v4: list[Range] = []
    v4_count = int((count - businesses) * 0.85)
    for n in range(v4_count):
        network = shared[rng.randrange(len(shared))]
        if ranges and n % 10 == 0:
            # Nested: a sub-network of an earlier IPv4 range, up to /28.
            _, outer_first, outer_last, _ = ranges[rng.randrange(len(ranges))]
            outer_prefix = 32 - (outer_last - outer_first + 1).bit_length() + 1
            prefix = min(28, outer_prefix + rng.randint(1, 8))
            first = outer_first + (rng.randrange(outer_last - outer_first + 1) >> (32 - prefix) << (32 - prefix))
        else:
            prefix = rng.choice((16, 18, 19, 20, 20, 21, 22, 22, 23, 24, 24, 24, 24, 26, 28))
            first = rng.getrandbits(prefix) << (32 - prefix)
        entry = (4, first, first + (1 << (32 - prefix)) - 1, network)
        ranges.append(entry)
        if network.kind == "isp" and prefix <= 24:
            isp_v4.append(entry)
    for _ in range(count - businesses - v4_count):
        prefix = rng.randint(32, 48)
        first = ((0x2 << 125) | rng.getrandbits(125)) >> (128 - prefix) << (128 - prefix)  # under 2000::/3
        ranges.append((6, first, first + (1 << (128 - prefix)) - 1, shared[rng.randrange(len(shared))]))
    for n in range(businesses):
        _, outer_first, outer_last, _ = isp_v4[rng.randrange(len(isp_v4))]
        prefix = rng.randint(24, 29)
        first = outer_first + (rng.randrange(outer_last - outer_first + 1) >> (32 - prefix) << (32 - prefix))
        business = Network("business", "bench-operator", domain=f"business{n}.example", contact_id=n + 1)
        ranges.append((4, first, first + (1 << (32 - prefix)) - 1, business))
    return ranges


def sample_addresses(ranges: list[Range], count: int, rng: random.Random) -> list[Address]:
    """Half inside a range (a random address of a random range), half anywhere (85 % IPv4)."""
    addresses: list[Address] = []
    for n in range(count):
        if n % 2:
            family, first, last, _ = ranges[rng.randrange(len(ranges))]
            value = rng.randint(first, last)
        elif rng.random() < 0.85:
            family, value = 4, rng.getrandbits(32)
        else:
            family, value = 6, (0x2 << 125) | rng.getrandbits(125)
        addresses.append(ipaddress.IPv4Address(value) if family == 4 else ipaddress.IPv6Address(value))
    return addresses


def rss_bytes() -> int | None:
    status = Path("/proc/self/status")
    if not status.exists():
        return None
    for line in status.read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return None


def timer_overhead_ns(samples: int = 200_000) -> float:
    """The median cost of one ``perf_counter_ns`` pair around nothing, subtracted from each timing."""
    clock = time.perf_counter_ns
    costs = []
    for _ in range(samples):
        started = clock()
        costs.append(clock() - started)
    return percentile([float(c) for c in costs], 50)


def scan(ranges: list[Range], address: Address) -> Network | None:
    """The naive baseline: every range's ``ipaddress`` network tested for containment, the smallest
    (of equal sizes, the last) kept."""
    best: Network | None = None
    best_size = -1
    for network, size, payload in _scan_table(ranges):
        if address in network and (best is None or size <= best_size):
            best, best_size = payload, size
    return best


_tables: dict[int, list[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, int, Network]]] = {}


def _scan_table(ranges: list[Range]) -> list[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, int, Network]]:
    table = _tables.get(id(ranges))
    if table is None:
        table = _tables[id(ranges)] = []
        for family, first, last, payload in ranges:
            prefix = (32 if family == 4 else 128) - (last - first).bit_length()
            table.append((ipaddress.ip_network((first, prefix)), last - first, payload))
    return table


def megabytes(value: float | None) -> str:
    return "n/a" if value is None else f"{value / 1e6:,.1f} MB"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranges", type=int, default=1_000_000)
    parser.add_argument("--lookups", type=int, default=200_000)
    args = parser.parse_args()
    rng = random.Random(33)
    started = time.perf_counter()
    ranges = synthetic_ranges(args.ranges, rng)
    v6 = sum(1 for r in ranges if r[0] == 6)
    business = sum(1 for r in ranges if r[3].kind == "business")
    print(
        f"{len(ranges):,} synthetic ranges ({len(ranges) - v6:,} IPv4, {v6:,} IPv6, {business:,} business) "
        f"made in {time.perf_counter() - started:.1f} s",
        flush=True,
    )

    gc.collect()
    rss_before = rss_bytes()
    started = time.perf_counter()
    index = RangeIndex.build(ranges)
    build_seconds = time.perf_counter() - started
    gc.collect()
    rss_after = rss_bytes()
    print(
        f"build          {build_seconds:6.2f} s   ({index.segments:,} disjoint segments, {index.networks:,} networks)",
        flush=True,
    )

    # A second build under tracemalloc: what the index keeps (its arrays and lists; the Network objects
    # were made before tracing began and are shared with the input) and the build's peak.
    del index
    gc.collect()
    tracemalloc.start()
    index = RangeIndex.build(ranges)
    gc.collect()
    kept, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_delta = None if rss_before is None or rss_after is None else rss_after - rss_before
    print(
        f"memory         {megabytes(kept)} kept by the index (tracemalloc; {kept / len(ranges):.1f} bytes a range), "
        f"build peak {megabytes(peak)}; RSS +{megabytes(rss_delta)} (includes the build's freed temporaries)",
        flush=True,
    )

    addresses = sample_addresses(ranges, args.lookups, rng)
    lookup, clock = index.lookup, time.perf_counter_ns
    for address in addresses[:10_000]:  # warm up
        lookup(address)
    overhead = timer_overhead_ns()
    timings = []
    for address in addresses:
        before = clock()
        lookup(address)
        timings.append(max(0.0, (clock() - before) - overhead) / 1000)
    p50, p99, worst = percentile(timings, 50), percentile(timings, 99), max(timings)
    print(
        f"latency        p50 {p50:5.2f} µs   p99 {p99:5.2f} µs   max {worst:7.1f} µs   over {len(timings):,} lookups "
        f"(timer overhead {overhead:.0f} ns, measured in this run, subtracted)",
        flush=True,
    )

    passes = 5
    started = time.perf_counter()
    for _ in range(passes):
        for address in addresses:
            lookup(address)
    per_second = passes * len(addresses) / (time.perf_counter() - started)
    texts = [str(a) for a in addresses]
    started = time.perf_counter()
    for text in texts:
        lookup(ipaddress.ip_address(text))
    parsed_per_second = len(texts) / (time.perf_counter() - started)
    print(
        f"throughput     {per_second:,.0f} lookups/s on one core ({parsed_per_second:,.0f}/s parsing the address "
        "text as well)",
        flush=True,
    )

    subset = rng.sample(ranges, BASELINE_RANGES)
    subset_index = RangeIndex.build(subset)
    probes = sample_addresses(subset, BASELINE_LOOKUPS, rng)
    _scan_table(subset)
    started = time.perf_counter()
    scanned = [scan(subset, a) for a in probes]
    scan_us = (time.perf_counter() - started) / len(probes) * 1e6
    started = time.perf_counter()
    indexed = [subset_index.lookup(a) for a in probes]
    subset_us = (time.perf_counter() - started) / len(probes) * 1e6
    agree = "the answers agree" if scanned == indexed else "THE ANSWERS DIFFER"
    print(
        f"baseline       ipaddress scan of {BASELINE_RANGES:,} ranges {scan_us:,.0f} µs a lookup "
        f"(~{scan_us * len(ranges) / BASELINE_RANGES / 1e3:,.0f} ms at {len(ranges):,}, linear); the index over the "
        f"same {BASELINE_RANGES:,}: {subset_us:.2f} µs ({scan_us / subset_us:,.0f}× faster; {agree})",
        flush=True,
    )

    p99_met = "met" if p99 <= GOAL_P99_US else "NOT MET"
    rate_met = "met" if per_second >= GOAL_PER_SECOND else "NOT MET"
    print(
        f"summary        {len(ranges):,} ranges: p99 {p99:.2f} µs (goal ≤ {GOAL_P99_US:.0f} µs: {p99_met}); "
        f"{per_second:,.0f} lookups/s (goal ≥ {GOAL_PER_SECOND:,}: {rate_met}); build {build_seconds:.1f} s; "
        f"{kept / len(ranges):.1f} MB per million ranges"  # bytes a range = MB a million
    )


if __name__ == "__main__":
    main()
