"""A URL or a host checked whole: a webhook URL must be https and reach only public addresses; the
sources' downloads check every host a publisher sends them to (a redirect, a link) with ``check_host``.

The host is resolved once, every address it resolves to is checked, and the request then connects to
the checked address (the original name still goes in the Host header and the TLS SNI, so the
certificate is verified against it): a DNS answer cannot change between the check and the connection.
``allow_private`` admits loopback and private addresses and plain http, for development and tests;
link-local and cloud-metadata addresses stay refused even then.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import httpx

from vpx.outbound.addresses import IPAddress, checked_address, is_literal
from vpx.outbound.resolver import Resolver, system_resolver

MAX_URL_LENGTH = 2048
# A host made only of digits, hex and dots ("2130706433", "0x7f.1", "017700000001"): an address in
# a form that resolvers read differently; only canonical dotted quads and bracketed IPv6 are accepted.
_NUMERIC_HOST = re.compile(r"^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]*))*\.?$", re.IGNORECASE)


class TargetRefused(Exception):
    """A URL the service will not send to, with the reason in words a user can act on."""


class HostUnresolved(TargetRefused):
    """The host gave no address (no such name, or no answer in time): perhaps for a moment only."""


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
    if not is_literal(url.host) and _NUMERIC_HOST.match(url.host):
        raise TargetRefused("writes an IP address in a numeric form other than dotted-decimal")
    return url


async def check_target(raw: str, *, allow_private: bool, resolver: Resolver = system_resolver) -> Target:
    """Resolves the URL's host once and checks every address; the Target connects to the first."""
    url = parse_url(raw, allow_private=allow_private)
    port = url.port or (443 if url.scheme == "https" else 80)
    address = await check_host(url.host, port, allow_private=allow_private, resolver=resolver)
    return Target(url=url, address=address)


async def check_host(host: str, port: int, *, allow_private: bool, resolver: Resolver = system_resolver) -> IPAddress:
    """Resolves ``host`` once and checks every address it gives; the first, when all may be reached.
    TargetRefused says why not (HostUnresolved when it gives none)."""
    if is_literal(host):
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
