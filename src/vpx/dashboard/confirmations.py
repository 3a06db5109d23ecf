"""Sign-up confirmation links: 32 random bytes in the emailed link; their SHA-256 and expiry on the
account's login row, one link at a time (a new one replaces it). Until its address is confirmed, an
account cannot sign in and has no free credits; confirming starts them (D8), once, whoever races."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.config import Settings
from vpx.credits import service as credit_service
from vpx.models import Account, AccountLogin

TOKEN_BYTES = 32
MAX_TOKEN_CHARS = 128
# Long enough for an email that arrives late or is read the next day; signing in with the password
# sends a new link after it.
CONFIRMATION_HOURS = 24


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def link_columns(token: str, now: datetime) -> dict[str, Any]:
    """The login row's columns for a new link."""
    return {"confirmation_hash": _digest(token), "confirmation_expires_at": now + timedelta(hours=CONFIRMATION_HOURS)}


@dataclass(frozen=True)
class Unconfirmed:
    """The account a confirmation link that still works belongs to."""

    account_id: str
    email: str


def _usable(token: str, now: datetime) -> Any:
    return (
        AccountLogin.confirmation_hash == _digest(token),
        AccountLogin.confirmation_expires_at > now,
        AccountLogin.email_confirmed_at.is_(None),
        AccountLogin.account_id.in_(select(Account.id).where(Account.status == "active")),
    )


async def issue(session: AsyncSession, *, account_id: str, token: str, now: datetime) -> None:
    """A new link for an account that is not confirmed yet; the earlier one stops working."""
    await session.execute(
        update(AccountLogin)
        .where(AccountLogin.account_id == account_id, AccountLogin.email_confirmed_at.is_(None))
        .values(**link_columns(token, now))
    )


async def find(session: AsyncSession, *, token: str, now: datetime) -> Unconfirmed | None:
    """The account of a link that still works, or None (unknown, used, expired, replaced, account not
    active)."""
    if not token or len(token) > MAX_TOKEN_CHARS:
        return None
    row = (
        await session.execute(
            select(Account.id, Account.email)
            .join(AccountLogin, AccountLogin.account_id == Account.id)
            .where(*_usable(token, now))
        )
    ).one_or_none()
    return Unconfirmed(account_id=row.id, email=row.email) if row is not None else None


async def confirm(session: AsyncSession, *, token: str, now: datetime, settings: Settings) -> str | None:
    """Spends the link: the address is confirmed and the free credits start. The account id, or None
    when the link does not work (then nothing changes)."""
    if not token or len(token) > MAX_TOKEN_CHARS:
        return None
    # Of two concurrent uses, the second waits for the first's row lock and then matches nothing.
    account_id = await session.scalar(
        update(AccountLogin)
        .where(*_usable(token, now))
        .values(email_confirmed_at=now, confirmation_hash=None, confirmation_expires_at=None)
        .returning(AccountLogin.account_id)
    )
    if account_id is None:
        return None
    await _start_free_credits(session, account_id=account_id, now=now, settings=settings)
    return str(account_id)


async def confirm_by_reset(session: AsyncSession, *, account_id: str, now: datetime, settings: Settings) -> None:
    """A used password reset link proves the address as a confirmation link does: an account not
    confirmed yet is confirmed now (its confirmation link stops working) and its free credits start."""
    confirmed = await session.scalar(
        update(AccountLogin)
        .where(AccountLogin.account_id == account_id, AccountLogin.email_confirmed_at.is_(None))
        .values(email_confirmed_at=now, confirmation_hash=None, confirmation_expires_at=None)
        .returning(AccountLogin.account_id)
    )
    if confirmed is not None:
        await _start_free_credits(session, account_id=account_id, now=now, settings=settings)


async def _start_free_credits(session: AsyncSession, *, account_id: str, now: datetime, settings: Settings) -> None:
    # D8: the account was made without a free month (accounts.service.create_account, start_free_month
    # False); starting it writes the month's one ``free_monthly`` ledger entry.
    await credit_service.refresh_free_credits(session, account_id=account_id, now=now, settings=settings)
