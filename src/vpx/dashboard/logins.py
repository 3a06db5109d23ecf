"""Dashboard sign-up and sign-in: an email and a password, hashed with argon2id (D8: the free plan,
no payment card, once the email address is confirmed)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from anyio import to_thread
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from pydantic import BaseModel, Field, field_validator
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.accounts import service as account_service
from vpx.config import Settings
from vpx.dashboard import confirmations
from vpx.errors import Conflict
from vpx.models import Account, AccountLogin

MIN_PASSWORD = 10
MAX_PASSWORD = 256
# Deliberately loose: one @, no spaces, a dot in the domain. Deliverability is the user's business.
EMAIL = re.compile(r"^[^@\s\x00-\x1f\x7f]{1,64}@[^@\s\x00-\x1f\x7f]+\.[^@\s\x00-\x1f\x7f]+$")
CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")

_hasher = PasswordHasher()


@lru_cache(maxsize=1)
def _decoy_hash() -> str:
    # Verified against when the email is unknown, so both answers take as long (no account probing).
    return _hasher.hash("decoy password that matches nothing")


class SignUpForm(BaseModel):
    """Emails and names are stripped of surrounding spaces; passwords are taken exactly as typed."""

    email: str = Field(max_length=320)
    password: str = Field(min_length=MIN_PASSWORD, max_length=MAX_PASSWORD)
    name: str = Field(default="", max_length=200)

    @field_validator("email", "name", mode="before")
    @classmethod
    def _strip(cls, value: object) -> object:
        return value.strip() if isinstance(value, str) else value

    @field_validator("name")
    @classmethod
    def _printable(cls, value: str) -> str:
        if CONTROL_CHARACTERS.search(value):
            raise ValueError("must not contain control characters")
        return value

    @field_validator("email")
    @classmethod
    def _email(cls, value: str) -> str:
        if not EMAIL.match(value):
            raise ValueError("enter an email address such as you@example.com")
        return value.lower()


class SignInForm(BaseModel):
    email: str = Field(max_length=320)
    password: str = Field(min_length=1, max_length=MAX_PASSWORD)

    @field_validator("email", mode="before")
    @classmethod
    def _email(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("email")
    @classmethod
    def _printable(cls, value: str) -> str:
        if CONTROL_CHARACTERS.search(value):
            raise ValueError("enter the email address you signed up with")
        return value


async def hash_password(password: str) -> str:
    """argon2id with the library's defaults (64 MiB, 3 passes), off the event loop."""
    return await to_thread.run_sync(_hasher.hash, password)


@dataclass(frozen=True)
class SignUp:
    """What a sign-up did. ``created``: a new account, not confirmed yet, ``account_id`` its id. Else
    the address had an account already and nothing changed; ``account_id`` is that account when its
    owner may be told (active, with a dashboard password), else None."""

    created: bool
    account_id: str | None


async def sign_up(
    session: AsyncSession, *, form: SignUpForm, password_hash: str, token: str, now: datetime, settings: Settings
) -> SignUp:
    """A new free-plan account with its password and a confirmation link (vpx.dashboard.confirmations),
    its free credits not started; or, for an address that has an account, nothing."""
    if await session.scalar(select(Account.id).where(Account.email == form.email)) is None:
        try:
            # A savepoint: a sign-up for the same address at the same moment makes this one a taken address.
            async with session.begin_nested():
                account = await account_service.create_account(
                    session,
                    name=form.name or form.email,
                    email=form.email,
                    plan="free",
                    now=now,
                    settings=settings,
                    start_free_month=False,
                )
                session.add(
                    AccountLogin(
                        account_id=account.id,
                        password_hash=password_hash,
                        created_at=now,
                        password_changed_at=now,
                        **confirmations.link_columns(token, now),
                    )
                )
                await session.flush()
            return SignUp(created=True, account_id=account.id)
        except (Conflict, IntegrityError):
            pass
    owner = await session.scalar(
        select(Account.id)
        .join(AccountLogin, AccountLogin.account_id == Account.id)
        .where(Account.email == form.email, Account.status == "active")
    )
    return SignUp(created=False, account_id=owner)


@dataclass(frozen=True)
class PasswordCheck:
    account_id: str | None
    rehash: bool = False
    status: str = "active"
    # Whether the email address has been confirmed (vpx.dashboard.confirmations).
    confirmed: bool = True


async def check_password(session: AsyncSession, *, email: str, password: str) -> PasswordCheck:
    """The account whose email and password these are, or ``account_id=None``."""
    row = (
        await session.execute(
            select(Account.id, Account.status, AccountLogin.password_hash, AccountLogin.email_confirmed_at)
            .join(AccountLogin, AccountLogin.account_id == Account.id)
            .where(Account.email == email.strip().lower())
        )
    ).one_or_none()
    stored = row.password_hash if row is not None else _decoy_hash()
    try:
        await to_thread.run_sync(_hasher.verify, stored, password)
    except (VerificationError, InvalidHashError):
        return PasswordCheck(account_id=None)
    if row is None:
        return PasswordCheck(account_id=None)
    return PasswordCheck(
        account_id=row.id,
        rehash=_hasher.check_needs_rehash(stored),
        status=row.status,
        confirmed=row.email_confirmed_at is not None,
    )


async def record_sign_in(session: AsyncSession, *, account_id: str, now: datetime, new_hash: str | None = None) -> None:
    values: dict[str, object] = {"last_sign_in_at": now}
    if new_hash is not None:
        values.update(password_hash=new_hash, password_changed_at=now)
    await session.execute(update(AccountLogin).where(AccountLogin.account_id == account_id).values(**values))
