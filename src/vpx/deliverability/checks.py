"""What can be said of an address without asking anyone: whether it is well formed, its domain as the
DNS spells it, and its flags (a disposable domain, a role address). The lists are data files beside
this module (data/disposable_domains.txt says where its list comes from)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, Literal, get_args

import idna

# The statuses an email can have, as the API shows them (docs/api-guide.md explains each).
EmailStatus = Literal["unknown", "valid_syntax", "invalid_syntax", "no_mx", "mx_found", "bounced"]
STATUSES: tuple[str, ...] = get_args(EmailStatus)
EmailFlag = Literal["disposable", "role"]

DATA = Path(__file__).resolve().parent / "data"
MAX_ADDRESS = 254  # RFC 5321's path limit less its angle brackets
MAX_LOCAL = 64
MAX_DOMAIN = 253

# A dot-atom local part (RFC 5322), with any non-ASCII character allowed as RFC 6531 does. Quoted
# local parts ("john doe"@…) are refused: no business publishes one, and few systems send to them.
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-\u0080-\U0010ffff]+"
_LOCAL = re.compile(rf"^{_ATOM}(?:\.{_ATOM})*$")
_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_SEPARATORS = str.maketrans("", "", ".-_")


@dataclass(frozen=True)
class AddressCheck:
    """An address as the syntax check sees it: ``domain`` is the ASCII (IDNA) form, lower case,
    None when the address is not well formed."""

    domain: str | None
    flags: tuple[EmailFlag, ...] = ()

    @property
    def valid(self) -> bool:
        return self.domain is not None


def check_address(email: str) -> AddressCheck:
    """The address's domain and flags; ``AddressCheck(None)`` when it is not a well-formed address
    with a domain name (an address literal such as user@[192.0.2.1] is not accepted)."""
    email = email.strip()
    local, at, domain_text = email.rpartition("@")
    if not at or len(email.encode()) > MAX_ADDRESS or len(local.encode()) > MAX_LOCAL or not _LOCAL.match(local):
        return AddressCheck(None)
    domain = domain_name(domain_text)
    if domain is None:
        return AddressCheck(None)
    flags: list[EmailFlag] = []
    if is_disposable(domain):
        flags.append("disposable")
    if is_role(local):
        flags.append("role")
    return AddressCheck(domain, tuple(flags))


def domain_name(text: str) -> str | None:
    """A mail domain in the ASCII form the DNS is asked in (IDNA, lower case, no trailing dot); None
    for anything that cannot be a public domain name (one label, an address, bad characters)."""
    text = text.strip().rstrip(".")
    if not text:
        return None
    if text.isascii():
        name = text.lower()
    else:
        try:
            name = idna.encode(text, uts46=True).decode("ascii")
        except (idna.IDNAError, UnicodeError, ValueError):
            return None
    labels = name.split(".")
    if len(name) > MAX_DOMAIN or len(labels) < 2 or labels[-1].isdigit():
        return None
    return name if all(_LABEL.match(label) for label in labels) else None


def is_disposable(domain: str) -> bool:
    """Whether the domain, or a domain above it, is on the disposable-domains list."""
    listed = disposable_domains()
    labels = domain.split(".")
    return any(".".join(labels[i:]) in listed for i in range(len(labels) - 1))


def is_role(local: str) -> bool:
    """Whether a local part names a function (info@, sales@, support@…), not a person."""
    base = local.lower().split("+", 1)[0].translate(_SEPARATORS)
    return base in role_local_parts()


def flags_text(flags: tuple[str, ...] | list[str]) -> str | None:
    """Flags as stored: comma-separated, None for none."""
    return ",".join(flags) if flags else None


def flags_of(text: str | None) -> list[str]:
    return text.split(",") if text else []


def deliverable(email: str | None, status: str | None) -> bool:
    """Whether mail to the address can be expected to arrive: its domain has a mail exchanger and
    no sequence saw it bounce for good (docs/decisions.md, "When an email is deliverable")."""
    return email is not None and status == "mx_found"


def revealed_fields(row: Any) -> dict[str, Any]:
    """``email_status``, ``email_flags`` and ``email_checked_at`` of a revealed contact, from a contacts
    row (a ``Contact`` or a row with those columns): nothing of them without an email."""
    if row.email is None:
        return {"email_status": None, "email_flags": [], "email_checked_at": None}
    checked_at = row.email_checked_at
    if isinstance(checked_at, str):  # a bare SQLite row: naive UTC text
        checked_at = datetime.fromisoformat(checked_at).replace(tzinfo=UTC)
    return {"email_status": row.email_status, "email_flags": flags_of(row.email_flags), "email_checked_at": checked_at}


@cache
def disposable_domains() -> frozenset[str]:
    return _read_list(DATA / "disposable_domains.txt")


@cache
def role_local_parts() -> frozenset[str]:
    return _read_list(DATA / "role_local_parts.txt")


def _read_list(path: Path) -> frozenset[str]:
    lines = (line.strip().lower() for line in path.read_text(encoding="utf-8").splitlines())
    return frozenset(line for line in lines if line and not line.startswith("#"))
