"""A visitor's address as the service may keep it (D33): classified, truncated to its network, hashed
for rate limits; never stored or logged whole. And page URLs cleaned of what identifies a person."""

from __future__ import annotations

import hashlib
import ipaddress
import re
import secrets
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from vpx.auth.network import IPAddress, parse_address

# "Private" as D33 means it: addresses no business on the internet visits from. Python's is_private
# also counts the documentation blocks (192.0.2.0/24, 2001:db8::/32…), which must resolve like public
# addresses so that fixtures can use them.
_NOT_ROUTED = tuple(
    ipaddress.ip_network(n)
    for n in (
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "100.64.0.0/10",  # carrier-grade NAT
        "0.0.0.0/8",
        "::1/128",
        "::/128",
        "fe80::/10",
        "fc00::/7",  # unique local
    )
)
# The process's key for address hashes: rate-limit counters never hold an address.
_HASH_KEY = secrets.token_bytes(32)
# Query parameters that carry a person or a secret, by name, and values that look like one.
_SECRET_NAMES = re.compile(
    r"(^|_|-)(e?mail|token|auth|key|secret|password|pass|pwd|session|sid|code|signature|sig|jwt|otp)($|_|-)",
    re.IGNORECASE,
)
_EMAIL = re.compile(r"[^@\s/]+@[^@\s/]+\.[a-z]{2,}", re.IGNORECASE)
# A token: long, of URL-safe characters, and random-looking (upper and lower case and digits mixed, or
# hexadecimal such as a UUID), so that a campaign slug like "black-friday-2026-email" stays.
_TOKEN = re.compile(r"^[A-Za-z0-9_\-.~+/=]{20,}$")
_HEX = re.compile(r"^[0-9a-fA-F]{32,}$|^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
REDACTED = "redacted"


def parse_visitor(text: str | None) -> IPAddress | None:
    """An address as given (IPv4-mapped IPv6 as IPv4), or None."""
    return parse_address(text) if text else None


def not_routed(address: IPAddress) -> bool:
    """RFC 1918, loopback, link-local, carrier-grade NAT, unique local and unspecified addresses."""
    return address.is_multicast or any(address.version == n.version and address in n for n in _NOT_ROUTED)


def network_of(address: IPAddress) -> str:
    """The address's /24 (IPv4) or /48 (IPv6): what a visit keeps instead of the address."""
    prefix = 24 if address.version == 4 else 48
    return str(ipaddress.ip_network(f"{address}/{prefix}", strict=False))


def address_key(address: str) -> str:
    """A keyed hash of the address, for counters that must not hold it."""
    return hashlib.blake2b(address.encode(), key=_HASH_KEY, digest_size=12).hexdigest()


def clean_url(url: str) -> str:
    """The URL without its fragment, with email addresses in its path and the values of query
    parameters that look like an email address or a token (or are named like one) replaced by
    "redacted"."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    path = _EMAIL.sub(REDACTED, parts.path) if "@" in parts.path else parts.path
    if not parts.query and not parts.fragment and path == parts.path:
        return url
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    cleaned = [(name, REDACTED if _personal(name, value) else value) for name, value in pairs]
    query = urlencode(cleaned, safe="/:@,") if pairs else parts.query
    return urlunsplit((parts.scheme, parts.netloc, path, query, ""))


def _personal(name: str, value: str) -> bool:
    if not value:
        return False
    return bool(_SECRET_NAMES.search(name) or _EMAIL.search(value) or _random_looking(value))


def _random_looking(value: str) -> bool:
    if _HEX.match(value):
        return True
    if not _TOKEN.match(value):
        return False
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)
