"""The key format of D3: ``<prefix><32 random base62 chars><6-char checksum>``.

Test keys (``vpx_test_ro_``, ``vpx_test_live_``, ``vpx_test_full_``) have the same three types; the prefix
alone says a key's mode, so a request is routed to the sandbox before any database lookup (vpx.sandbox).

The checksum (CRC-32 of prefix and body, in base62) lets a mistyped or invented key be refused
without touching the database. Only a SHA-256 hash of a key is stored.
"""

from __future__ import annotations

import hashlib
import zlib
from enum import StrEnum

from vpx.ids import BASE62, random_base62

BODY_LENGTH = 32
CHECKSUM_LENGTH = 6


class KeyType(StrEnum):
    ro = "ro"
    live = "live"
    full = "full"


PREFIXES: dict[KeyType, str] = {
    KeyType.ro: "vpx_ro_",
    KeyType.live: "vpx_live_",
    KeyType.full: "vpx_full_",
}
# Test mode: the same types, against the sandbox catalogue and a test balance (vpx.sandbox).
TEST_PREFIX = "vpx_test_"
TEST_PREFIXES: dict[KeyType, str] = {
    key_type: TEST_PREFIX + prefix[len("vpx_") :] for key_type, prefix in PREFIXES.items()
}
LABELS: dict[KeyType, str] = {
    KeyType.ro: "Read Only",
    KeyType.live: "Standard",
    KeyType.full: "Full Access",
}


def _base62(number: int, width: int) -> str:
    digits = []
    while number:
        number, rest = divmod(number, 62)
        digits.append(BASE62[rest])
    return "".join(reversed(digits)).rjust(width, "0")


def checksum(prefix_and_body: str) -> str:
    return _base62(zlib.crc32(prefix_and_body.encode()), CHECKSUM_LENGTH)


def prefix_of(key_type: KeyType, *, test: bool = False) -> str:
    return (TEST_PREFIXES if test else PREFIXES)[key_type]


def generate_key(key_type: KeyType, *, test: bool = False) -> str:
    head = prefix_of(key_type, test=test) + random_base62(BODY_LENGTH)
    return head + checksum(head)


def is_test_key(raw: str) -> bool:
    """Whether a key (or a key's displayed prefix) is a test key: its prefix says so."""
    return raw.startswith(TEST_PREFIX)


def parse_key(raw: str) -> KeyType | None:
    """The type of a well-formed key (live or test) whose checksum holds; None for anything else."""
    prefixes = TEST_PREFIXES if is_test_key(raw) else PREFIXES
    for key_type, prefix in prefixes.items():
        if raw.startswith(prefix):
            rest = raw[len(prefix) :]
            if len(rest) < BODY_LENGTH + CHECKSUM_LENGTH or len(rest) > 128:
                return None
            if not rest.isascii() or not rest.isalnum():  # base62: ASCII letters and digits
                return None
            head, check = raw[:-CHECKSUM_LENGTH], raw[-CHECKSUM_LENGTH:]
            return key_type if checksum(head) == check else None
    return None


def hash_key(raw: str) -> str:
    # Keys carry 190 bits of randomness, so a fast hash is as safe as a slow one here.
    return hashlib.sha256(raw.encode()).hexdigest()


def display_prefix(raw: str, key_type: KeyType) -> str:
    return raw[: len(prefix_of(key_type, test=is_test_key(raw))) + 4]
