"""The SSRF guard (D26): a webhook URL must be https and reach only public addresses; the sources'
downloads check every host a publisher sends them to (a redirect, a link) with ``check_host``.

The host is resolved once, every address it resolves to is checked, and the request then connects to
the checked address (the original name still goes in the Host header and the TLS SNI, so the
certificate is verified against it): a DNS answer cannot change between the check and the connection.
``VPX_WEBHOOK_ALLOW_PRIVATE=1`` admits loopback and private addresses and plain http, for development
and tests; link-local and cloud-metadata addresses stay refused even then.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]

MAX_URL_LENGTH = 2048
RESOLVE_TIMEOUT_SECONDS = 5.0
# Instance-metadata services reachable from cloud machines; never a webhook target.
METADATA = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254")
)
NAT64 = ipaddress.ip_network("64:ff9b::/96")
# How a refused name is described: never with the address it resolves to.
NON_PUBLIC = "resolves to a non-public address"
# A host made only of digits, hex and dots ("2130706433", "0x7f.1", "017700000001"): an address in
# a form that resolvers read differently; only canonical dotted quads and bracketed IPv6 are accepted.
_NUMERIC_HOST = re.compile(r"^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]*))*\.?$", re.IGNORECASE)


class TargetRefused(Exception):
    """A URL the service will not send to, with the reason in words a user can act on."""


@dataclass(frozen=True)
class Target:
    """A URL whose host has been resolved and checked: connect to ``address``, nowhere else."""

    url: httpx.URL
    address: IPAddress

    @property
    def port(self) -> int:
        return self.url.port or (443 if self.url.scheme == "https" else 80)

    @property
    def host_header(self) -> str:
        return self.url.netloc.decode("ascii")

    @property
    def tls_server_name(self) -> str | None:
        """The name the certificate is verified against (and sent as SNI); None for plain http."""
        return self.url.host if self.url.scheme == "https" else None

    @property
    def request_target(self) -> str:
        return self.url.raw_path.decode("ascii")


def parse_url(raw: str, *, allow_private: bool) -> httpx.URL:
    """The URL when its form is acceptable (scheme, host, no credentials); TargetRefused otherwise."""
    if len(raw) > MAX_URL_LENGTH:
        raise TargetRefused(f"must be at most {MAX_URL_LENGTH} characters")
    try:
        url = httpx.URL(raw.strip())
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise TargetRefused(f"is not a valid URL ({exc})") from None
    schemes = ("https", "http") if allow_private else ("https",)
    if url.scheme not in schemes:
        raise TargetRefused("must use https" if url.scheme != "https" else "scheme not allowed")
    if not url.host:
        raise TargetRefused("has no host")
    if url.userinfo:
        raise TargetRefused("must not carry credentials")
    if not _is_literal(url.host) and _NUMERIC_HOST.match(url.host):
        raise TargetRefused("writes an IP address in a numeric form other than dotted-decimal")
    return url


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (IPv4-mapped, 6to4, Teredo, NAT64), if any."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def refusal(address: IPAddress, *, allow_private: bool) -> str | None:
    """Why an address may not be a webhook target, or None when it may.

    Loopback is loopback in either family: ``::1`` (which Python also counts as reserved, being in
    ``::/8``) and ``::ffff:127.0.0.1`` are judged as 127.0.0.1 is. An IPv4-mapped address is judged by
    the IPv4 address it maps to, the only one it reaches."""
    embedded = _embedded_ipv4(address)
    mapped = isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None
    for candidate in (embedded,) if mapped else (address, embedded):
        if candidate is None:
            continue
        if candidate in METADATA:
            return f"{address} is a cloud metadata address"
        if candidate.is_link_local:
            return f"{address} is a link-local address"
        if candidate.is_loopback:
            if allow_private:
                continue
            return f"{address} is a loopback address"
        if candidate.is_unspecified or candidate.is_multicast or candidate.is_reserved:
            return f"{address} is not a unicast address"
        if allow_private:
            continue
        if not candidate.is_global:
            return f"{address} is a private address"
    return None


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for a name."""
    loop = asyncio.get_running_loop()
    infos = await asyncio.wait_for(
        loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), timeout=RESOLVE_TIMEOUT_SECONDS
    )
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def check_target(raw: str, *, allow_private: bool, resolver: Resolver = system_resolver) -> Target:
    """Resolves the URL's host once and checks every address; the Target connects to the first."""
    url = parse_url(raw, allow_private=allow_private)
    port = url.port or (443 if url.scheme == "https" else 80)
    address = await check_host(url.host, port, allow_private=allow_private, resolver=resolver)
    return Target(url=url, address=address)


class HostUnresolved(TargetRefused):
    """The host gave no address (no such name, or no answer in time): perhaps for a moment only."""


async def check_host(host: str, port: int, *, allow_private: bool, resolver: Resolver = system_resolver) -> IPAddress:
    """Resolves ``host`` once and checks every address it gives; the first, when all may be reached.
    TargetRefused says why not (HostUnresolved when it gives none)."""
    if _is_literal(host):
        found = [host]
    else:
        try:
            found = await resolver(host, port)
        except (OSError, TimeoutError, UnicodeError) as exc:
            why = " (no answer in time)" if isinstance(exc, TimeoutError) else ""
            raise HostUnresolved(f"host {host} does not resolve{why}") from None
        if not found:
            raise HostUnresolved(f"host {host} does not resolve")
    addresses: list[IPAddress] = []
    for text in found:
        address, reason = checked_address(host, text, allow_private=allow_private)
        if reason is not None:
            raise TargetRefused(reason)
        assert address is not None
        addresses.append(address)
    return addresses[0]


def checked_address(host: str, text: str, *, allow_private: bool) -> tuple[IPAddress | None, str | None]:
    """One address ``host`` was found at: the address and None when it may be reached, or None and
    why not.

    A literal address is named in the reason (the user wrote it). A name's address never is, nor the
    kind of address it is: "host vm resolves to 127.0.0.1" would tell a customer what the service's
    own network calls its machines. Every caller of the guard (webhooks, mail hosts) words it so."""
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None, f"host {host} does not resolve to an address"
    reason = refusal(address, allow_private=allow_private)
    if reason is None:
        return address, None
    if _is_literal(host.strip().removeprefix("[").removesuffix("]")):
        return None, reason
    return None, f"host {host} {NON_PUBLIC}"
