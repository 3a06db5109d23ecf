"""Reverse DNS with forward confirmation, against a real DNS server on loopback; ISP-style names; the
operator's server list."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
from typing import Any

import dns.resolver
import pytest

from tests.visitors.dns_server import DnsServer
from vpx.visitors.dns import ReverseDns, isp_style, parse_servers

V4 = ipaddress.IPv4Address("192.0.2.10")
V6 = ipaddress.IPv6Address("2001:db8::10")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def reverse_dns(server: DnsServer, **options: Any) -> ReverseDns:
    return ReverseDns([(server.host, server.port)], **options)


def asked(server: DnsServer, qtype: str) -> int:
    return sum(1 for _, kind in server.queries if kind == qtype)


async def test_ptr_confirmed_by_a_gives_the_name_in_lower_case(dns_server: DnsServer) -> None:
    dns_server.add_ptr("192.0.2.10", "Mail.Acme-Plumbing.Example.")
    dns_server.add_a("mail.acme-plumbing.example", "192.0.2.10")

    assert await reverse_dns(dns_server).confirmed_name(V4) == "mail.acme-plumbing.example"
    assert dns_server.queries == [("10.2.0.192.in-addr.arpa", "PTR"), ("mail.acme-plumbing.example", "A")]


async def test_ptr_whose_a_points_elsewhere_is_not_confirmed(dns_server: DnsServer) -> None:
    dns_server.add_ptr("192.0.2.10", "mail.acme.example")
    dns_server.add_a("mail.acme.example", "198.51.100.20")

    assert await reverse_dns(dns_server).confirmed_name(V4) is None


async def test_ptr_whose_name_does_not_exist_is_not_confirmed(dns_server: DnsServer) -> None:
    dns_server.add_ptr("192.0.2.10", "forged.bank.example")

    assert await reverse_dns(dns_server).confirmed_name(V4) is None


async def test_address_without_ptr_has_no_name(dns_server: DnsServer) -> None:
    assert await reverse_dns(dns_server).confirmed_name(V4) is None
    assert dns_server.queries == [("10.2.0.192.in-addr.arpa", "PTR")]  # NXDOMAIN: nothing to confirm


async def test_second_of_several_ptrs_confirms(dns_server: DnsServer) -> None:
    dns_server.add_ptr("192.0.2.10", "aaa.unrelated.example")
    dns_server.add_ptr("192.0.2.10", "gw.denver.acme.example")
    dns_server.add_a("aaa.unrelated.example", "203.0.113.99")
    dns_server.add_a("gw.denver.acme.example", "192.0.2.10")

    assert await reverse_dns(dns_server).confirmed_name(V4) == "gw.denver.acme.example"


async def test_at_most_three_ptr_names_are_tried(dns_server: DnsServer) -> None:
    for name in ("a.example", "b.example", "c.example", "d.example"):
        dns_server.add_ptr("192.0.2.10", name)
    dns_server.add_a("d.example", "192.0.2.10")  # the fourth by name: never asked

    assert await reverse_dns(dns_server).confirmed_name(V4) is None
    assert sorted(q for q, kind in dns_server.queries if kind == "A") == ["a.example", "b.example", "c.example"]


async def test_ipv6_ptr_is_confirmed_by_aaaa(dns_server: DnsServer) -> None:
    dns_server.add_ptr("2001:db8::10", "vpn.hospital.example")
    dns_server.add_aaaa("vpn.hospital.example", "2001:0db8:0000::0010")

    assert await reverse_dns(dns_server).confirmed_name(V6) == "vpn.hospital.example"
    assert ("0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa", "PTR") in dns_server.queries


async def test_ipv6_ptr_is_not_confirmed_by_an_a_record(dns_server: DnsServer) -> None:
    dns_server.add_ptr("2001:db8::10", "vpn.hospital.example")
    dns_server.add_a("vpn.hospital.example", "192.0.2.10")

    assert await reverse_dns(dns_server).confirmed_name(V6) is None


async def test_cname_in_the_forward_chain_is_followed(dns_server: DnsServer) -> None:
    dns_server.add_ptr("192.0.2.10", "www.acme.example")
    dns_server.add_cname("www.acme.example", "edge.acme.example")
    dns_server.add_a("edge.acme.example", "192.0.2.10")

    assert await reverse_dns(dns_server).confirmed_name(V4) == "www.acme.example"


async def test_slow_server_gives_none_within_the_budget(dns_server: DnsServer) -> None:
    dns_server.add_ptr("192.0.2.10", "mail.acme.example")
    dns_server.add_a("mail.acme.example", "192.0.2.10")
    dns_server.delay(2.0)

    started = time.perf_counter()
    assert await reverse_dns(dns_server, timeout=0.2).confirmed_name(V4) is None
    assert time.perf_counter() - started < 0.4


async def test_servfail_gives_none(dns_server: DnsServer) -> None:
    dns_server.add_ptr("192.0.2.10", "mail.acme.example")
    dns_server.refuse()

    assert await reverse_dns(dns_server).confirmed_name(V4) is None


async def test_unreachable_server_gives_none() -> None:
    with DnsServer() as server:
        address = (server.host, server.port)
    # Nothing listens there any more: ICMP port unreachable, or silence until the budget ends.
    assert await ReverseDns([address], timeout=0.2).confirmed_name(V4) is None


async def test_confirmed_name_is_cached(dns_server: DnsServer) -> None:
    dns_server.add_ptr("192.0.2.10", "mail.acme.example")
    dns_server.add_a("mail.acme.example", "192.0.2.10")
    resolver = reverse_dns(dns_server)
    await resolver.confirmed_name(V4)
    dns_server.queries.clear()

    assert await resolver.confirmed_name(V4) == "mail.acme.example"
    assert dns_server.queries == []


async def test_cached_name_expires_with_the_record_ttl(dns_server: DnsServer) -> None:
    dns_server.ttl = 60
    dns_server.add_ptr("192.0.2.10", "mail.acme.example")
    dns_server.add_a("mail.acme.example", "192.0.2.10")
    clock = Clock()
    resolver = reverse_dns(dns_server, cache_seconds=3600.0, clock=clock)
    await resolver.confirmed_name(V4)
    dns_server.queries.clear()

    clock.now += 59
    await resolver.confirmed_name(V4)
    assert dns_server.queries == []
    clock.now += 2
    assert await resolver.confirmed_name(V4) == "mail.acme.example"
    assert asked(dns_server, "PTR") == 1


async def test_no_answer_is_cached_for_the_negative_period(dns_server: DnsServer) -> None:
    clock = Clock()
    resolver = reverse_dns(dns_server, negative_cache_seconds=300.0, clock=clock)
    assert await resolver.confirmed_name(V4) is None
    dns_server.add_ptr("192.0.2.10", "mail.acme.example")
    dns_server.add_a("mail.acme.example", "192.0.2.10")

    clock.now += 299
    assert await resolver.confirmed_name(V4) is None
    assert asked(dns_server, "PTR") == 1
    clock.now += 2
    assert await resolver.confirmed_name(V4) == "mail.acme.example"


async def test_failure_is_cached_like_no_answer(dns_server: DnsServer) -> None:
    """A broken resolver costs one look-up per address and negative period, not one per visit."""
    dns_server.refuse()
    resolver = reverse_dns(dns_server)
    await resolver.confirmed_name(V4)
    dns_server.queries.clear()

    assert await resolver.confirmed_name(V4) is None
    assert dns_server.queries == []


async def test_cache_keeps_at_most_cache_size_addresses(dns_server: DnsServer) -> None:
    resolver = reverse_dns(dns_server, cache_size=2)
    addresses = [ipaddress.IPv4Address(f"192.0.2.{n}") for n in (1, 2, 3)]
    for address in addresses:
        await resolver.confirmed_name(address)
    dns_server.queries.clear()

    await resolver.confirmed_name(addresses[2])
    await resolver.confirmed_name(addresses[1])
    assert dns_server.queries == []
    await resolver.confirmed_name(addresses[0])  # the least recently used: forgotten
    assert dns_server.queries == [("1.2.0.192.in-addr.arpa", "PTR")]


async def test_concurrent_look_ups_of_one_address_share_the_queries(dns_server: DnsServer) -> None:
    dns_server.add_ptr("192.0.2.10", "mail.acme.example")
    dns_server.add_a("mail.acme.example", "192.0.2.10")
    dns_server.delay(0.05)
    resolver = reverse_dns(dns_server)

    names = await asyncio.gather(*(resolver.confirmed_name(V4) for _ in range(5)))
    assert names == ["mail.acme.example"] * 5
    assert dns_server.queries == [("10.2.0.192.in-addr.arpa", "PTR"), ("mail.acme.example", "A")]


async def test_cancelled_caller_does_not_cancel_the_shared_look_up(dns_server: DnsServer) -> None:
    dns_server.add_ptr("192.0.2.10", "mail.acme.example")
    dns_server.add_a("mail.acme.example", "192.0.2.10")
    dns_server.delay(0.05)
    resolver = reverse_dns(dns_server)
    first = asyncio.create_task(resolver.confirmed_name(V4))
    second = asyncio.create_task(resolver.confirmed_name(V4))
    await asyncio.sleep(0.01)
    first.cancel()

    assert await second == "mail.acme.example"
    assert first.cancelled()


async def test_servers_given_need_no_resolv_conf(dns_server: DnsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dns.resolver.BaseResolver, "read_resolv_conf", _no_resolv_conf)
    dns_server.add_ptr("192.0.2.10", "mail.acme.example")
    dns_server.add_a("mail.acme.example", "192.0.2.10")

    assert await reverse_dns(dns_server).confirmed_name(V4) == "mail.acme.example"


async def test_system_without_a_resolver_gives_none_and_says_so_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(dns.resolver.BaseResolver, "read_resolv_conf", _no_resolv_conf)
    resolver = ReverseDns(None)  # constructs: the system's resolver is read on first look-up

    with caplog.at_level(logging.WARNING, logger="vpx.visitors"):
        assert await resolver.confirmed_name(V4) is None
        assert await resolver.confirmed_name(ipaddress.IPv4Address("192.0.2.11")) is None
    assert [r.getMessage().startswith("reverse DNS is off") for r in caplog.records] == [True]


def _no_resolv_conf(self: object, f: object) -> None:
    raise dns.resolver.NoResolverConfiguration  # as dnspython does without /etc/resolv.conf


def test_reverse_dns_refuses_a_bad_server_list() -> None:
    with pytest.raises(ValueError, match="no DNS server"):
        ReverseDns([])
    with pytest.raises(ValueError):
        ReverseDns([("dns.example", 53)])
    with pytest.raises(ValueError, match="port"):
        ReverseDns([("192.0.2.53", 0)])


@pytest.mark.parametrize(
    ("text", "servers"),
    [
        (
            "127.0.0.1:5353,[2001:db8::53]:53,192.0.2.53",
            [("127.0.0.1", 5353), ("2001:db8::53", 53), ("192.0.2.53", 53)],
        ),
        (" 192.0.2.53 , 198.51.100.53:5353 ", [("192.0.2.53", 53), ("198.51.100.53", 5353)]),
        ("2001:db8::53", [("2001:db8::53", 53)]),
        ("[2001:0db8::0053]", [("2001:db8::53", 53)]),
    ],
)
def test_parse_servers_reads_addresses_and_ports(text: str, servers: list[tuple[str, int]]) -> None:
    assert parse_servers(text) == servers


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no DNS server"),
        (" , ", "no DNS server"),
        ("192.0.2.53,", "empty DNS server entry"),
        ("dns.example", "'dns.example' is not an IP address"),
        ("dns.example:53", "'dns.example' is not an IP address"),
        ("192.0.2.300", "is not an IP address"),
        ("192.0.2.53:0", "port must be a number from 1 to 65535"),
        ("192.0.2.53:65536", "port must be a number from 1 to 65535"),
        ("192.0.2.53:dns", "port must be a number"),
        ("192.0.2.53:", "port must be a number"),
        ("[2001:db8::53", "unbalanced brackets"),
        ("[192.0.2.53]:53", "brackets are for IPv6"),
        ("udp://192.0.2.53", "is not an IP address"),
    ],
)
def test_parse_servers_refuses_anything_else_saying_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as refused:
        parse_servers(text)
    assert "expected" in str(refused.value)


@pytest.mark.parametrize(
    "name",
    [
        "c-198-51-100-7.hsd1.co.comcast.example",
        "pool-203-0-113-9.bstnma.fios.example",
        "dsl-192-0-2-44.dynamic.example",
        "static-203-0-113-5.customer.example",
        "host-192-0-2-1.isp.example",
        "192-0-2-1.isp.example",
        "ip-192-0-2-1.eu-west-1.compute.example",
        "1.2.0.192.broadband.isp.example",
        "ip_192_0_2_1.isp.example",
        "adsl.bstnma.isp.example",
        "cpe.dyn.isp.example",
        "cust99.lutn.cable.isp.example",
        "res-72.isp.example",
        "mobile-12-34.carrier.example",
        "ppp4.isp.example",
        "Dhcp.Isp.Example.",
    ],
)
def test_isp_customer_line_names_are_isp_style(name: str) -> None:
    assert isp_style(name)


@pytest.mark.parametrize(
    "name",
    [
        "mail.acme-plumbing.example",
        "gw.denver.acme.example",
        "vpn.hospital.example",
        "static.acme.example",  # a business's own static-files host
        "mobile.acme.example",
        "mail2.acme.example",
        "dynamics-crm.acme.example",
        "www.residential-roofing.example",  # the business's own name, not the line's
        "cable-and-wire.example",
        "smtp.2-step.example",
        "fw01.clinic.example",
    ],
)
def test_business_names_are_not_isp_style(name: str) -> None:
    assert not isp_style(name)


def test_address_written_as_digits_or_hex_is_isp_style_given_the_address() -> None:
    address = ipaddress.IPv4Address("198.51.100.7")
    assert not isp_style("c6336407.isp.example")
    assert isp_style("c6336407.isp.example", address)
    assert isp_style("p198051100007.isp.example", address)
    assert not isp_style("mail.acme.example", address)
