"""The DNS resolver the service asks, as the operator configures it (VPX_DNS_SERVERS,
VPX_DNS_TIMEOUT_SECONDS): visitor identification's reverse look-ups (vpx.visitors.dns) and the
deliverability checks' MX look-ups (vpx.deliverability.mx) both go through here.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Sequence
from typing import Protocol

import dns.asyncresolver
import dns.exception
import dns.nameserver

log = logging.getLogger("vpx.dns")


class DnsSettings(Protocol):
    """The settings a resolver is built from (``vpx.config.Settings`` has them; the settings check
    VPX_DNS_SERVERS with ``parse_servers`` below, so this module never imports them)."""

    @property
    def dns_servers(self) -> str: ...
    @property
    def dns_timeout_seconds(self) -> float: ...


class Nameservers:
    """A resolver built once, on first use, from the operator's servers or else the system's.

    servers: (address, port) pairs (the operator's VPX_DNS_SERVERS); None: the system resolver, read
    from /etc/resolv.conf on first use. ``timeout`` is one look-up's whole budget: half of it per try,
    so that a lost datagram or a dead first server leaves time for a second try. The resolver keeps no
    cache of its own: each caller caches what it means to ask again. ValueError for an empty list or
    a pair that is no address and port.
    """

    def __init__(self, servers: Sequence[tuple[str, int]] | None = None, *, timeout: float, purpose: str) -> None:
        if timeout <= 0:
            raise ValueError("the DNS timeout must be positive")
        self.timeout = timeout
        self.purpose = purpose  # said in the one warning when the system has no resolver
        self._resolver: dns.asyncresolver.Resolver | None = None
        self._no_resolver = False
        if servers is not None:
            # configure=False: the operator's servers only, and no /etc/resolv.conf needed.
            resolver = dns.asyncresolver.Resolver(configure=False)
            resolver.nameservers = [dns.nameserver.Do53Nameserver(a, p) for a, p in checked_servers(servers)]
            self._resolver = self._tuned(resolver)

    @classmethod
    def from_settings(cls, settings: DnsSettings, *, purpose: str) -> Nameservers:
        servers = parse_servers(settings.dns_servers) if settings.dns_servers.strip() else None
        return cls(servers, timeout=settings.dns_timeout_seconds, purpose=purpose)

    def resolver(self) -> dns.asyncresolver.Resolver | None:
        """The resolver; None (said once) where the system has none, so that a container without
        /etc/resolv.conf still starts."""
        if self._resolver is None and not self._no_resolver:
            try:
                self._resolver = self._tuned(dns.asyncresolver.Resolver())
            except dns.exception.DNSException as error:
                self._no_resolver = True
                log.warning("%s: the system has no usable resolver (%s); set VPX_DNS_SERVERS", self.purpose, error)
        return self._resolver

    def _tuned(self, resolver: dns.asyncresolver.Resolver) -> dns.asyncresolver.Resolver:
        resolver.timeout = self.timeout / 2
        resolver.lifetime = self.timeout
        resolver.retry_servfail = False
        resolver.cache = None
        return resolver


def checked_servers(servers: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    if not servers:
        raise ValueError("no DNS server given: pass None for the system's resolver")
    checked = []
    for address, port in servers:
        if not 0 < port < 65536:
            raise ValueError(f"DNS server port {port} is out of range")
        checked.append((str(ipaddress.ip_address(address)), port))
    return checked


def parse_servers(text: str) -> list[tuple[str, int]]:
    """ "127.0.0.1:5353,[2001:db8::53]:53,192.0.2.53" → pairs (port 53 by default); ValueError with
    a clear message for anything else (the settings use it to refuse a bad VPX_DNS_SERVERS at start)."""
    items = [item.strip() for item in text.split(",")]
    if not any(items):
        raise ValueError("no DNS server given: expected addresses separated by commas, such as 192.0.2.53")
    return [_server(item) for item in items]


_EXPECTED = "expected an IP address with an optional port: 192.0.2.53, 192.0.2.53:5353 or [2001:db8::53]:5353"


def _server(item: str) -> tuple[str, int]:
    if not item:
        raise ValueError(f"an empty DNS server entry (a stray comma?); {_EXPECTED}")
    port_text = "53"
    if item.startswith("["):
        bracketed = re.fullmatch(r"\[([^\]]+)\](?::(.*))?", item)
        if bracketed is None:
            raise ValueError(f"DNS server {item!r}: unbalanced brackets; {_EXPECTED}")
        host, port_text = bracketed.group(1), bracketed.group(2) or port_text
    elif item.count(":") == 1:
        host, port_text = item.split(":")
    else:
        host = item  # an IPv4 address, or an IPv6 one without a port
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        # A host name would need a resolver to find the resolver.
        raise ValueError(f"DNS server {item!r}: {host!r} is not an IP address; {_EXPECTED}") from None
    if item.startswith("[") and address.version != 6:
        raise ValueError(f"DNS server {item!r}: brackets are for IPv6 addresses; {_EXPECTED}")
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"DNS server {item!r}: the port must be a number from 1 to 65535; {_EXPECTED}")
    return str(address), int(port_text)
