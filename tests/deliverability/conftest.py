"""Fixtures of the deliverability tests: the DNS fake the visitor tests use (dnslib on loopback)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.visitors.dns_server import DnsServer


@pytest.fixture
def dns_server() -> Iterator[DnsServer]:
    """A real DNS server on 127.0.0.1, empty until the test adds records; stopped after the test."""
    with DnsServer() as server:
        yield server
