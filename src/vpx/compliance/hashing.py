"""DROP's hashes of an email and a phone: the identifier standardised as the agency's technical
specification says, SHA-256 of its UTF-8 bytes, Base64 (44 characters), no salt.

Email: every whitespace character removed, then lower case (dots, plus signs and the rest kept).
Phone: digits only, the last ten of them (all of them when fewer remain).

Pure functions without imports from the rest of vpx: the SQLite connections register them as SQL
functions (vpx.db), so that the triggers which keep ``contacts.email_hash`` and ``phone_hash`` compute
exactly what Python computes; PostgreSQL's triggers use its own ``sha256()`` on the same standard form.
"""

from __future__ import annotations

import base64
import hashlib
import re

_WHITESPACE = re.compile(r"\s+")
_NOT_DIGIT = re.compile(r"\D+")

# The SQL functions SQLite's connections get (the triggers of migration 20261203_compliance call them).
SQL_EMAIL_HASH = "vpx_email_hash"
SQL_PHONE_HASH = "vpx_phone_hash"


def standard_email(value: str) -> str:
    return _WHITESPACE.sub("", value).lower()


def standard_phone(value: str) -> str:
    return _NOT_DIGIT.sub("", value)[-10:]


def digest(standard: str) -> str:
    """SHA-256 of the standardised value's UTF-8 bytes, Base64."""
    return base64.b64encode(hashlib.sha256(standard.encode("utf-8")).digest()).decode("ascii")


def email_hash(value: str | None) -> str | None:
    """DROP's hash of an email address; None for none (or one that standardises to nothing)."""
    if value is None:
        return None
    standard = standard_email(value)
    return digest(standard) if standard else None


def phone_hash(value: str | None) -> str | None:
    """DROP's hash of a phone number; None for none (or one without digits)."""
    if value is None:
        return None
    standard = standard_phone(value)
    return digest(standard) if standard else None


def register_sqlite_functions(connection: object) -> None:
    """Registers the two hashes on a SQLite DB-API connection (or an async adapter of one)."""
    create = getattr(connection, "create_function", None)
    if create is None:
        return
    create(SQL_EMAIL_HASH, 1, email_hash, deterministic=True)
    create(SQL_PHONE_HASH, 1, phone_hash, deterministic=True)
