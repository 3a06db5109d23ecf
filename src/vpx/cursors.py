"""Opaque pagination cursors: a kind and a position, base64url-encoded."""

from __future__ import annotations

import base64
import binascii
import re

from vpx.errors import InvalidParameters


def encode_cursor(kind: str, position: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{position}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str, kind: str) -> int:
    """The position in a cursor of this kind; a 422 for anything else."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        text = base64.urlsafe_b64decode(padded.encode()).decode()
        found, _, position = text.partition(":")
        if found == kind and position.isdigit() and len(position) < 19:
            return int(position)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        pass
    raise InvalidParameters.field("cursor", "is not a cursor returned by this endpoint")


def encode_pair_cursor(kind: str, first: int, second: int) -> str:
    """A cursor holding two positions (a time in microseconds and a row id, say)."""
    return base64.urlsafe_b64encode(f"{kind}:{first}.{second}".encode()).decode().rstrip("=")


def decode_pair_cursor(cursor: str, kind: str) -> tuple[int, int]:
    """The two positions in a cursor of this kind; a 422 for anything else."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        text = base64.urlsafe_b64decode(padded.encode()).decode()
        found, _, positions = text.partition(":")
        first, _, second = positions.partition(".")
        if found == kind and first.isdigit() and second.isdigit() and len(first) < 19 and len(second) < 19:
            return int(first), int(second)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        pass
    raise InvalidParameters.field("cursor", "is not a cursor returned by this endpoint")


_KEY = re.compile(r"^[A-Za-z0-9_]{1,64}$")


def encode_keyed_cursor(kind: str, position: int, key: str) -> str:
    """A cursor holding a position (a time in microseconds, say) and a row's text id (letters, digits
    and underscores), for lists ordered by both."""
    return base64.urlsafe_b64encode(f"{kind}:{position}.{key}".encode()).decode().rstrip("=")


def decode_keyed_cursor(cursor: str, kind: str) -> tuple[int, str]:
    """The position and the id in a cursor of this kind; a 422 for anything else."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        text = base64.urlsafe_b64decode(padded.encode()).decode()
        found, _, rest = text.partition(":")
        position, _, key = rest.partition(".")
        if found == kind and position.isdigit() and len(position) < 19 and _KEY.match(key):
            return int(position), key
    except (binascii.Error, UnicodeDecodeError, ValueError):
        pass
    raise InvalidParameters.field("cursor", "is not a cursor returned by this endpoint")
