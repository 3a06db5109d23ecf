"""Which buyers' reports and bounces count as independent evidence that a value is bad
(docs/decisions.md, "Refunds when data proves wrong").

A free sign-up costs nothing, so two of them agreeing proves nothing: evidence counts only from
accounts that have paid (the operator granted them credits at least once), and two pieces of it
count as two only when their accounts are not related: not one account, not one owner's email
domain (a common free-mail domain says nothing), and not one network (a report's /24 for IPv4, /48
for IPv6, kept as a keyed hash). vpx takes no payments itself, so there is no payment identity to
compare; an operator who sells credits through another system can compare it there.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.models import Account, LedgerEntry
from vpx.secrets.box import SecretBox

HASH_PURPOSE = "report network keys"
# Domains anyone can take an address at: sharing one relates nobody.
FREE_MAIL = frozenset(
    {
        "aol.com",
        "gmail.com",
        "googlemail.com",
        "gmx.com",
        "gmx.net",
        "hotmail.com",
        "icloud.com",
        "live.com",
        "mail.com",
        "me.com",
        "msn.com",
        "outlook.com",
        "proton.me",
        "protonmail.com",
        "yahoo.com",
        "yandex.com",
        "zoho.com",
    }
)


def network_of(address: str | None) -> str | None:
    """The network an address belongs to, as compared here: its /24 (IPv4) or /48 (IPv6)."""
    if not address:
        return None
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    prefix = 24 if ip.version == 4 else 48
    return str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


def network_key(box: SecretBox, address: str | None) -> str | None:
    """A keyed hash of the address's network: comparable, never the address."""
    network = network_of(address)
    if network is None:
        return None
    return hmac.new(box.derive_key(HASH_PURPOSE), network.encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Witness:
    """One account's piece of evidence (a report or a bounce), with what relates it to others."""

    account_id: str
    paid: bool
    domain: str | None
    network: str | None = None


def related(a: Witness, b: Witness) -> bool:
    return (
        a.account_id == b.account_id
        or (a.domain is not None and a.domain == b.domain)
        or (a.network is not None and a.network == b.network)
    )


def independent_pair(witnesses: Sequence[Witness]) -> bool:
    """Whether two of them are paying accounts unrelated to each other."""
    paying = [w for w in witnesses if w.paid]
    return any(not related(a, b) for i, a in enumerate(paying) for b in paying[i + 1 :])


def _domain(email: str | None) -> str | None:
    if not email or "@" not in email:
        return None
    domain = email.rsplit("@", 1)[1].strip().casefold()
    return None if domain in FREE_MAIL else domain


async def accounts_of(session: AsyncSession, account_ids: Iterable[str]) -> dict[str, Witness]:
    """Each account's standing: whether it has paid, and its owner's email domain."""
    ids = sorted(set(account_ids))
    if not ids:
        return {}
    paid = set(
        await session.scalars(
            select(LedgerEntry.account_id)
            .where(LedgerEntry.account_id.in_(ids), LedgerEntry.kind == "grant")
            .distinct()
        )
    )
    rows = await session.execute(select(Account.id, Account.email).where(Account.id.in_(ids)))
    return {row.id: Witness(row.id, row.id in paid, _domain(row.email)) for row in rows}


async def has_paid(session: AsyncSession, account_id: str) -> bool:
    found = await accounts_of(session, [account_id])
    return account_id in found and found[account_id].paid
