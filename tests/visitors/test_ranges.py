"""The in-memory range index: the most specific range wins, in both families, at every boundary."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vpx.visitors.ranges import Network, RangeIndex

ISP = Network("isp", "ip2asn", organisation="Example Broadband", asn=64496)
HOSTING = Network("hosting", "ip2asn", organisation="Example Hosting", asn=64497)
ACME = Network("business", "operator", domain="acme.example", contact_id=12)
BETA = Network("business", "operator", domain="beta.example")


def v4(text: str) -> int:
    return int(ipaddress.IPv4Address(text))


def v6(text: str) -> int:
    return int(ipaddress.IPv6Address(text))


def net(text: str) -> tuple[int, int, int]:
    network = ipaddress.ip_network(text)
    return network.version, int(network.network_address), int(network.broadcast_address)


def at(index: RangeIndex, text: str) -> Network | None:
    return index.lookup(ipaddress.ip_address(text))


def test_empty_index_finds_nothing() -> None:
    index = RangeIndex.build([])
    assert len(index) == 0
    assert at(index, "192.0.2.1") is None
    assert at(index, "2001:db8::1") is None
    assert at(index, "::ffff:192.0.2.1") is None


def test_business_range_inside_an_isp_range_wins_inside_only() -> None:
    index = RangeIndex.build([(*net("198.51.100.0/24"), ISP), (*net("198.51.100.64/26"), ACME)])
    assert at(index, "198.51.100.63") == ISP
    assert at(index, "198.51.100.64") == ACME
    assert at(index, "198.51.100.127") == ACME
    assert at(index, "198.51.100.128") == ISP
    assert at(index, "198.51.100.255") == ISP
    assert at(index, "198.51.101.0") is None


def test_most_specific_wins_whatever_the_order_given() -> None:
    ranges = [(*net("203.0.113.0/24"), HOSTING), (*net("203.0.113.0/28"), ACME), (*net("203.0.113.0/26"), ISP)]
    for order in (ranges, ranges[::-1]):
        index = RangeIndex.build(order)
        assert at(index, "203.0.113.0") == ACME
        assert at(index, "203.0.113.15") == ACME
        assert at(index, "203.0.113.16") == ISP
        assert at(index, "203.0.113.64") == HOSTING


def test_equal_ranges_the_later_one_given_wins() -> None:
    index = RangeIndex.build([(*net("192.0.2.0/24"), ACME), (*net("192.0.2.0/24"), BETA)])
    assert at(index, "192.0.2.7") == BETA
    index = RangeIndex.build([(*net("192.0.2.0/24"), BETA), (*net("192.0.2.0/24"), ACME)])
    assert at(index, "192.0.2.7") == ACME


def test_overlapping_ranges_of_one_size_split_where_they_meet() -> None:
    # Two 100-address ranges overlapping on 50: the later given holds the overlap.
    first, second = v4("192.0.2.0"), v4("192.0.2.50")
    index = RangeIndex.build([(4, first, first + 99, ACME), (4, second, second + 99, BETA)])
    assert at(index, "192.0.2.49") == ACME
    assert at(index, "192.0.2.50") == BETA
    assert at(index, "192.0.2.149") == BETA
    assert at(index, "192.0.2.150") is None


def test_smaller_overlapping_range_wins_the_overlap() -> None:
    index = RangeIndex.build(
        [(4, v4("192.0.2.10"), v4("192.0.2.19"), ACME), (4, v4("192.0.2.0"), v4("192.0.2.99"), ISP)]
    )
    assert at(index, "192.0.2.9") == ISP
    assert at(index, "192.0.2.10") == ACME
    assert at(index, "192.0.2.19") == ACME
    assert at(index, "192.0.2.20") == ISP


def test_adjacent_ranges_do_not_bleed_into_each_other() -> None:
    index = RangeIndex.build([(*net("198.51.100.0/25"), ACME), (*net("198.51.100.128/25"), BETA)])
    assert at(index, "198.51.100.127") == ACME
    assert at(index, "198.51.100.128") == BETA
    assert at(index, "198.51.99.255") is None


def test_first_and_last_addresses_of_each_family() -> None:
    index = RangeIndex.build(
        [(4, 0, 0, ACME), (4, 2**32 - 1, 2**32 - 1, BETA), (6, 0, 0, ISP), (6, 2**128 - 1, 2**128 - 1, HOSTING)]
    )
    assert at(index, "0.0.0.0") == ACME
    assert at(index, "0.0.0.1") is None
    assert at(index, "255.255.255.255") == BETA
    assert at(index, "::") == ISP
    assert at(index, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff") == HOSTING
    assert at(index, "::1") is None


def test_ipv6_range_across_a_64_bit_boundary() -> None:
    index = RangeIndex.build(
        [(6, v6("2001:db8:0:1::") - 2, v6("2001:db8:0:1::") + 1, ACME), (*net("2001:db8:0:1::/127"), BETA)]
    )
    assert at(index, "2001:db8::ffff:ffff:ffff:fffd") is None
    assert at(index, "2001:db8::ffff:ffff:ffff:fffe") == ACME
    assert at(index, "2001:db8::ffff:ffff:ffff:ffff") == ACME
    assert at(index, "2001:db8:0:1::") == BETA
    assert at(index, "2001:db8:0:1::1") == BETA
    assert at(index, "2001:db8:0:1::2") is None


def test_ipv6_nested_ranges() -> None:
    index = RangeIndex.build([(*net("2001:db8::/32"), ISP), (*net("2001:db8:1234::/48"), ACME)])
    assert at(index, "2001:db8:1234::1") == ACME
    assert at(index, "2001:db8:1234:ffff:ffff:ffff:ffff:ffff") == ACME
    assert at(index, "2001:db8:1235::") == ISP
    assert at(index, "2001:db9::") is None


def test_families_do_not_mix() -> None:
    # 192.0.2.1 as an integer is also the IPv6 address ::c000:201.
    index = RangeIndex.build([(*net("192.0.2.0/24"), ACME)])
    assert at(index, "::c000:201") is None
    index = RangeIndex.build([(6, v6("::c000:200"), v6("::c000:2ff"), ACME)])
    assert at(index, "192.0.2.1") is None


def test_ipv4_mapped_address_looks_up_as_ipv4() -> None:
    index = RangeIndex.build([(*net("192.0.2.0/24"), ACME)])
    assert at(index, "::ffff:192.0.2.9") == ACME
    assert at(index, "::ffff:198.51.100.9") is None


def test_ipv6_range_in_the_mapped_space_is_indexed_as_ipv4() -> None:
    index = RangeIndex.build([(*net("::ffff:192.0.2.0/120"), ACME), (*net("::/0"), HOSTING)])
    assert at(index, "192.0.2.9") == ACME
    assert at(index, "::ffff:192.0.2.9") == ACME
    assert at(index, "198.51.100.1") == HOSTING  # ::/0 covers the mapped space too
    assert at(index, "2001:db8::1") == HOSTING


def test_identical_networks_are_stored_once() -> None:
    index = RangeIndex.build(
        [(4, n * 256, n * 256 + 255, Network("isp", "ip2asn", organisation="Example", asn=64496)) for n in range(1000)]
    )
    assert len(index) == 1000
    assert index.networks == 1
    assert index.segments == 1  # adjacent segments of one network merge


def test_bad_ranges_are_refused() -> None:
    with pytest.raises(ValueError):
        RangeIndex.build([(5, 0, 1, ACME)])
    with pytest.raises(ValueError):
        RangeIndex.build([(4, 10, 9, ACME)])
    with pytest.raises(ValueError):
        RangeIndex.build([(4, 0, 2**32, ACME)])


NETWORKS = [Network("isp", f"source{n}", asn=64496 + n) for n in range(4)]
small_ranges = st.lists(
    st.tuples(st.integers(0, 200), st.integers(0, 60), st.sampled_from(NETWORKS)).map(
        lambda t: (t[0], min(255, t[0] + t[1]), t[2])
    ),
    max_size=25,
)


# Where the ranges sit: IPv4 from 0 and mid-space; IPv6 inside one 64-bit high half, and across the
# boundary of two (the index splits IPv6 addresses in halves).
BASES = [(4, 0), (4, v4("198.51.100.0")), (6, v6("2001:db8::")), (6, v6("2001:db8:0:1::") - 128)]


@settings(max_examples=400, deadline=None)
@given(ranges=small_ranges, where=st.sampled_from(BASES))
def test_lookup_matches_a_scan_of_every_range(ranges: list[tuple[int, int, Network]], where: tuple[int, int]) -> None:
    family, base = where
    index = RangeIndex.build([(family, base + first, base + last, network) for first, last, network in ranges])
    make = ipaddress.IPv4Address if family == 4 else ipaddress.IPv6Address
    for offset in range(257):
        best: tuple[tuple[int, int], Network] | None = None
        for order, (first, last, network) in enumerate(ranges):
            rank = (last - first, -order)
            if first <= offset <= last and (best is None or rank < best[0]):
                best = (rank, network)
        assert index.lookup(make(base + offset)) == (best[1] if best else None)
