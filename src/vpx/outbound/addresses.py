"""Whether one address may be reached, and how a refusal is worded (never with the address a name
resolves to)."""

from __future__ import annotations

import ipaddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Instance-metadata services reachable from cloud machines; never a webhook target.
METADATA = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254")
)
NAT64 = ipaddress.ip_network("64:ff9b::/96")
# How a refused name is described: never with the address it resolves to.
NON_PUBLIC = "resolves to a non-public address"


def is_literal(host: str) -> bool:
    """Whether ``host`` is an IP address written out rather than a name."""
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
    if is_literal(host.strip().removeprefix("[").removesuffix("]")):
        return None, reason
    return None, f"host {host} {NON_PUBLIC}"
