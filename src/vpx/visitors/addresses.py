"""A visitor's address as the service may keep it (D33): classified, truncated to its network, hashed
for rate limits; never stored or logged whole. And page URLs cleaned of what identifies a person or
carries a secret."""

from __future__ import annotations

import hashlib
import ipaddress
import re
import secrets
from urllib.parse import unquote, urlsplit, urlunsplit

from vpx.auth.network import IPAddress, parse_address
from vpx.fields import CONTROL_CHARACTERS
from vpx.visitors.schemas import MAX_URL

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
# Parameter names that carry a secret or a person. A long word counts wherever it stands in the name
# (`sessionid`, `accessToken`, `X-Amz-Signature`, `PHPSESSID`); a short one only as a word of its own
# (`sid`, `api_key`, `KeyPairId`), so that `keyword`, `inside` or `zipcode` stay.
_SECRET_PARTS = (
    "token",
    "secret",
    "passw",
    "passphrase",
    "pwd",
    "session",
    "sessid",
    "credential",
    "signature",
    "apikey",
    "accesskey",
    "privatekey",
    "authoriz",
    "authenticat",
    "bearer",
    "jwt",
    "hmac",
    "email",
)
_SECRET_WORDS = frozenset(
    {
        "auth",
        "key",
        "sid",
        "sig",
        "code",
        "otp",
        "totp",
        "pass",
        "pin",
        "mail",
        "nonce",
        "ticket",
        "hash",
        "csrf",
        "xsrf",
    }
)
# Words of a name: split at anything but letters and digits, and where a lower-case letter or a digit
# meets a capital (camelCase).
_WORD_BREAK = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")
_EMAIL = re.compile(r"[^@\s/]+@[^@\s/]+\.[a-z]{2,}", re.IGNORECASE)
# A token: long, of URL-safe characters, and random-looking (upper and lower case and digits mixed, or
# hexadecimal such as a UUID), so that a campaign slug like "black-friday-2026-email" stays.
_TOKEN = re.compile(r"^[A-Za-z0-9_\-.~+/=]{20,}$")
_HEX = re.compile(r"^[0-9a-fA-F]{32,}$|^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
# Query fields are separated by "&", and by ";" on some servers: both are fields here.
_FIELD_SEPARATOR = re.compile(r"([&;])")
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


def clean_url(url: str, *, max_length: int = MAX_URL) -> str | None:
    """The URL as a visit may keep it, or None when it is not one that can be parsed (never kept raw).

    Dropped: user information (``alice:S3cret@``) and the fragment. Replaced by "redacted": a path
    segment holding an email address (also percent-encoded), and the value of a query or path
    parameter named like a secret (``secret_name``) or that looks like an email address or a random
    token. Everything else stays as it was written. Longer than ``max_length`` once cleaned, the URL
    loses its query string, then is cut."""
    if CONTROL_CHARACTERS.search(url):
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError for a port that is not one
    except ValueError:
        return None
    host = parts.netloc.rpartition("@")[2]
    path = "/".join(_clean_segment(segment) for segment in parts.path.split("/"))
    query = "".join(_clean_field(field) for field in _FIELD_SEPARATOR.split(parts.query))
    cleaned = urlunsplit((parts.scheme, host, path, query, ""))
    if len(cleaned) > max_length:
        cleaned = urlunsplit((parts.scheme, host, path, "", ""))[:max_length]
    return cleaned


def secret_name(name: str) -> bool:
    """Whether a parameter of this name carries a secret or a person (case and separators ignored)."""
    flat = re.sub(r"[^a-z0-9]", "", name.lower())
    if any(part in flat for part in _SECRET_PARTS):
        return True
    return any(word.lower() in _SECRET_WORDS for word in _WORD_BREAK.split(name))


def _clean_segment(segment: str) -> str:
    """A path segment: "redacted" if it holds an email address; its ``;name=value`` parameters cleaned."""
    decoded = _decoded(segment)
    if "@" in decoded and _EMAIL.search(decoded):
        return REDACTED
    if ";" not in segment:
        return segment
    head, *parameters = segment.split(";")
    return ";".join([head, *(_clean_field(parameter) for parameter in parameters)])


def _clean_field(field: str) -> str:
    """One ``name=value`` field (or a separator, unchanged), its value "redacted" when personal."""
    if field in ("&", ";") or not field:
        return field
    raw_name, equals, raw_value = field.partition("=")
    name, value = _decoded(raw_name, plus=True), _decoded(raw_value, plus=True)
    if _EMAIL.search(name):
        return REDACTED
    return f"{raw_name}={REDACTED}" if equals and _personal(name, value) else field


def _decoded(text: str, *, plus: bool = False) -> str:
    """Percent-decoded until nothing changes (an address encoded twice is still an address)."""
    if plus:
        text = text.replace("+", " ")
    for _ in range(3):
        if "%" not in text:
            break
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    return text


def _personal(name: str, value: str) -> bool:
    if not value:
        return False
    return bool(secret_name(name) or _EMAIL.search(value) or _random_looking(value))


def _random_looking(value: str) -> bool:
    if _HEX.match(value):
        return True
    if not _TOKEN.match(value):
        return False
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)
