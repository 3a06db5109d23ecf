"""MX look-ups against the local DNS fake (dnslib on loopback): what each answer means, and the pace."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.visitors.dns_server import DnsServer
from vpx.deliverability.mx import MxAnswer, MxLookups, Pace, reserved
from vpx.nameservers import Nameservers


def lookups(server: DnsServer, *, timeout: float = 1.0, per_second: float = 1000.0) -> MxLookups:
    return MxLookups(
        Nameservers([(server.host, server.port)], timeout=timeout, purpose="MX look-ups are off"), Pace(per_second)
    )


async def test_a_domain_with_mx_records_has_a_mail_exchanger_for_the_records_ttl(dns_server: DnsServer) -> None:
    dns_server.add_mx("acme.example", 10, "mx1.acme.example")
    dns_server.add_mx("acme.example", 20, "mx2.acme.example")
    dns_server.set_ttl("acme.example", 1800)
    found = lookups(dns_server)
    assert await found.look_up("acme.example") == MxAnswer("mx_found", 1800.0)
    assert dns_server.queries == [("acme.example", "MX")] and found.queries == 1


async def test_a_null_mx_says_the_domain_takes_no_mail(dns_server: DnsServer) -> None:
    dns_server.add_mx("parked.example", 0, ".")
    assert await lookups(dns_server).look_up("parked.example") == MxAnswer("no_mx", 300.0)


async def test_a_domain_that_does_not_exist_has_no_mail_exchanger(dns_server: DnsServer) -> None:
    assert await lookups(dns_server).look_up("gone.example") == MxAnswer("no_mx")
    assert dns_server.queries == [("gone.example", "MX")]


async def test_without_mx_the_domains_own_address_is_its_mail_exchanger(dns_server: DnsServer) -> None:
    dns_server.add_a("webonly.example", "192.0.2.80")
    dns_server.add_aaaa("v6only.example", "2001:db8::80")
    found = lookups(dns_server)
    assert await found.look_up("webonly.example") == MxAnswer("mx_found", 300.0)
    assert await found.look_up("v6only.example") == MxAnswer("mx_found", 300.0)
    assert dns_server.queries == [
        ("webonly.example", "MX"),
        ("webonly.example", "A"),
        ("v6only.example", "MX"),
        ("v6only.example", "A"),
        ("v6only.example", "AAAA"),
    ]


async def test_a_domain_with_neither_mx_nor_address_has_no_mail_exchanger(dns_server: DnsServer) -> None:
    dns_server.add_txt("nothing.example", "v=spf1 -all")
    assert await lookups(dns_server).look_up("nothing.example") == MxAnswer("no_mx")


async def test_a_cname_is_followed(dns_server: DnsServer) -> None:
    dns_server.add_cname("alias.example", "acme.example")
    dns_server.add_mx("acme.example", 10, "mx.acme.example")
    assert (await lookups(dns_server).look_up("alias.example")).status == "mx_found"


async def test_a_look_up_that_times_out_is_unknown(dns_server: DnsServer) -> None:
    dns_server.add_mx("slow.example", 10, "mx.slow.example")
    dns_server.delay(2.0)
    started = time.monotonic()
    assert await lookups(dns_server, timeout=0.3).look_up("slow.example") == MxAnswer("unknown")
    assert time.monotonic() - started < 1.5


async def test_a_server_failure_is_unknown(dns_server: DnsServer) -> None:
    dns_server.refuse()
    assert await lookups(dns_server).look_up("acme.example") == MxAnswer("unknown")


async def test_no_resolver_at_all_is_unknown_and_asks_nothing() -> None:
    class NoResolver(Nameservers):
        def resolver(self) -> None:
            return None

    found = MxLookups(NoResolver(timeout=1.0, purpose="MX look-ups are off"), Pace(10))
    assert await found.look_up("acme.example") == MxAnswer("unknown") and found.queries == 0


async def test_queries_are_paced_at_the_configured_rate(dns_server: DnsServer) -> None:
    for i in range(10):
        dns_server.add_mx(f"d{i}.example", 10, f"mx.d{i}.example")
    found = lookups(dns_server, per_second=20)
    started = time.monotonic()
    answers = await asyncio.gather(*(found.look_up(f"d{i}.example") for i in range(10)))
    elapsed = time.monotonic() - started
    assert all(a.status == "mx_found" for a in answers)
    # Ten queries at 20 a second: the tenth goes out 9 / 20 s after the first.
    assert elapsed >= 0.45


def test_a_pace_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        Pace(0)


async def test_reserved_names_are_not_asked_of_the_systems_resolver(dns_server: DnsServer) -> None:
    dns_server.add_mx("acme.example", 10, "mx.acme.example")
    found = MxLookups(
        Nameservers([(dns_server.host, dns_server.port)], timeout=1.0, purpose="MX look-ups are off"),
        Pace(1000),
        ask_reserved=False,
    )
    for domain in ("acme.example", "shop.test", "nowhere.invalid", "box.localhost", "example.com", "mail.example.org"):
        assert await found.look_up(domain) == MxAnswer("no_mx")
    assert dns_server.queries == [] and found.queries == 0
    assert not reserved("examples.com") and not reserved("acme.testing") and not reserved("example.co")
