"""Client addresses and IP allow-lists (D6)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_address(text: str) -> IPAddress | None:
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def parse_network(text: str) -> IPNetwork:
    """An address or CIDR range; raises ValueError for anything else. An IPv4-mapped IPv6 address
    (``::ffff:203.0.113.7``) is the IPv4 address it maps, as clients are compared."""
    network = ipaddress.ip_network(text.strip(), strict=False)
    if isinstance(network, ipaddress.IPv6Network) and network.network_address.ipv4_mapped is not None:
        mapped = network.network_address.ipv4_mapped
        return ipaddress.ip_network(f"{mapped}/{max(0, network.prefixlen - 96)}", strict=False)
    return network


def normalise_allowlist(entries: Iterable[str]) -> list[str]:
    """Validated, canonical allow-list entries; raises ValueError naming the first bad one."""
    result = []
    for entry in entries:
        try:
            result.append(str(parse_network(entry)))
        except ValueError as exc:
            raise ValueError(f"{entry!r} is not an IP address or CIDR range") from exc
    return result


def client_address(peer: str | None, forwarded_for: str | None, trusted: Sequence[IPNetwork]) -> str | None:
    """The caller's address: the TCP peer, or, when the peer is a trusted proxy, the right-most
    X-Forwarded-For entry that is not itself a trusted proxy."""
    if peer is None:
        return None
    peer_ip = parse_address(peer)
    if peer_ip is None:
        return peer
    if not forwarded_for or not _within(peer_ip, trusted):
        return str(peer_ip)
    hops = [parse_address(part) for part in forwarded_for.split(",")]
    for hop in reversed(hops):
        if hop is None:
            break
        if not _within(hop, trusted):
            return str(hop)
    return str(peer_ip)


def _within(address: IPAddress, networks: Sequence[IPNetwork]) -> bool:
    return any(address.version == net.version and address in net for net in networks)


def allowed(address: str | None, allowlist: Sequence[str]) -> bool:
    """True when the allow-list is empty or holds the address."""
    if not allowlist:
        return True
    parsed = parse_address(address) if address else None
    if parsed is None:
        return False
    return _within(parsed, [parse_network(entry) for entry in allowlist])
