"""Password reset tokens: 32 random bytes in the emailed link, their SHA-256 in ``password_resets``.
A token works once, within ``VPX_PASSWORD_RESET_MINUTES``, for an active account with a dashboard
password; using it sets the new password, ends every dashboard session of the account and voids the
account's other reset links; and, for an account whose email address was not confirmed yet, confirms
it (vpx.dashboard.confirmations)."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.config import Settings
from vpx.dashboard import confirmations
from vpx.models import Account, AccountLogin, DashboardSession
from vpx.models.dashboard import PasswordReset

TOKEN_BYTES = 32
MAX_TOKEN_CHARS = 128


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class ResetTarget:
    """The account a valid reset token belongs to."""

    account_id: str
    email: str


async def account_for_reset(session: AsyncSession, *, email: str) -> ResetTarget | None:
    """The account a reset email may go to: active, with a dashboard password. Suspended and deleted
    accounts, and accounts an operator created without a password, get none."""
    row = (
        await session.execute(
            select(Account.id, Account.email)
            .join(AccountLogin, AccountLogin.account_id == Account.id)
            .where(Account.email == email, Account.status == "active")
        )
    ).one_or_none()
    return ResetTarget(account_id=row.id, email=row.email) if row is not None else None


async def issue(
    session: AsyncSession, *, target: ResetTarget | None, token: str, now: datetime, settings: Settings
) -> None:
    """Stores the token for the target, when there is one. Expired tokens of every account go either
    way, so that a request for an unknown email writes as a request for a known one does."""
    await session.execute(delete(PasswordReset).where(PasswordReset.expires_at <= now))
    if target is None:
        return
    session.add(
        PasswordReset(
            id=_digest(token),
            account_id=target.account_id,
            created_at=now,
            expires_at=now + timedelta(minutes=settings.password_reset_minutes),
        )
    )
    await session.flush()


async def find(session: AsyncSession, *, token: str, now: datetime) -> ResetTarget | None:
    """The account of a token that still works, or None (unknown, used, expired, account not active)."""
    if not token or len(token) > MAX_TOKEN_CHARS:
        return None
    row = (
        await session.execute(
            select(Account.id, Account.email)
            .select_from(PasswordReset)
            .join(Account, Account.id == PasswordReset.account_id)
            .join(AccountLogin, AccountLogin.account_id == Account.id)
            .where(PasswordReset.id == _digest(token), PasswordReset.expires_at > now, Account.status == "active")
        )
    ).one_or_none()
    return ResetTarget(account_id=row.id, email=row.email) if row is not None else None


async def use(
    session: AsyncSession, *, token: str, password_hash: str, now: datetime, settings: Settings
) -> str | None:
    """Spends the token and sets the password; the account id, or None when the token does not work
    (then nothing changes). Two requests with one token: one of them wins, the other gets None. The
    link proves the email address: an account not confirmed yet is confirmed (its free credits start)."""
    if not token or len(token) > MAX_TOKEN_CHARS:
        return None
    # Deleting it is what spends it: of two concurrent uses the second deletes nothing.
    account_id = await session.scalar(
        delete(PasswordReset)
        .where(PasswordReset.id == _digest(token), PasswordReset.expires_at > now)
        .returning(PasswordReset.account_id)
    )
    if account_id is None:
        return None
    changed = await session.scalar(
        update(AccountLogin)
        .where(
            AccountLogin.account_id == account_id,
            AccountLogin.account_id.in_(select(Account.id).where(Account.status == "active")),
        )
        .values(password_hash=password_hash, password_changed_at=now)
        .returning(AccountLogin.account_id)
    )
    if changed is None:
        return None  # suspended or deleted since the email went: the token is spent all the same
    await session.execute(delete(DashboardSession).where(DashboardSession.account_id == account_id))
    await session.execute(delete(PasswordReset).where(PasswordReset.account_id == account_id))
    await confirmations.confirm_by_reset(session, account_id=account_id, now=now, settings=settings)
    return str(account_id)
