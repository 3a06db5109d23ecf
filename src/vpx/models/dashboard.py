"""Dashboard sign-in: an account's password and its browser sessions."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, UtcDateTime


class AccountLogin(Base):
    """The password of an account that signed up in the dashboard; the email is the account's own."""

    __tablename__ = "account_logins"

    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True)
    # argon2id, in the PHC string format ("$argon2id$v=19$m=…").
    password_hash: Mapped[str] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    password_changed_at: Mapped[datetime] = mapped_column(UtcDateTime())
    last_sign_in_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    # When the emailed link confirmed the address (a sign-up's confirmation or a password reset); until
    # then the account cannot sign in and has no free credits. The link's token is 32 random bytes,
    # stored as its SHA-256, one link at a time (a new one replaces it).
    email_confirmed_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    confirmation_hash: Mapped[str | None] = mapped_column(String(64), unique=True, index=True)
    confirmation_expires_at: Mapped[datetime | None] = mapped_column(UtcDateTime())


class DashboardSession(Base):
    """A signed-in browser. The cookie holds a random token; only its SHA-256 is stored here."""

    __tablename__ = "dashboard_sessions"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    # The synchronizer token every form of this session must send back.
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime(), index=True)


class PasswordReset(Base):
    """A password reset link sent by email: single use, short-lived. The link holds a random token
    (32 bytes); only its SHA-256 is stored here."""

    __tablename__ = "password_resets"

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime(), index=True)
