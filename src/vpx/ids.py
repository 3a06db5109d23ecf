"""Public identifiers: a type prefix and either a random base62 string or a database number."""

from __future__ import annotations

import secrets
import string

BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase


def random_base62(length: int) -> str:
    """``length`` random base62 characters from one read of the system's CSPRNG (8 random bits per
    character, of which base62 needs 5.95: the bias of the modulo is below 2⁻⁴⁰)."""
    number = int.from_bytes(secrets.token_bytes(length + 5), "big")
    characters = []
    for _ in range(length):
        number, digit = divmod(number, 62)
        characters.append(BASE62[digit])
    return "".join(characters)


def new_id(prefix: str, length: int = 16) -> str:
    """A fresh random identifier such as ``acc_3kTz9…``."""
    return f"{prefix}_{random_base62(length)}"


def public_number_id(prefix: str, number: int) -> str:
    """The public form of a numbered row, e.g. ``ct_1042`` for contact 1042."""
    return f"{prefix}_{number}"


def parse_number_id(prefix: str, public_id: str) -> int | None:
    """The row number inside ``<prefix>_<n>``, or None when the string is not of that form."""
    head, sep, tail = public_id.partition("_")
    if head != prefix or not sep or not tail.isascii() or not tail.isdigit() or len(tail) > 18:
        return None
    return int(tail)
