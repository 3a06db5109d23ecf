"""Accounts and their API keys."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime
from vpx.money import CreditsType


class Account(Base):
    __tablename__ = "accounts"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str | None] = mapped_column(String(320), unique=True)
    plan: Mapped[str] = mapped_column(String(32), default="free")
    # D8: this month's free credits, and the UTC month (YYYY-MM) they belong to.
    free_credits: Mapped[Decimal] = mapped_column(CreditsType(), default=Decimal(0))
    free_period: Mapped[str] = mapped_column(String(7), default="")
    # Granted (paid) credits and revenue share; these carry over.
    paid_credits: Mapped[Decimal] = mapped_column(CreditsType(), default=Decimal(0))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    # The operator's lifecycle: active, suspended (everything held) or deleted (erased, ledger kept).
    status: Mapped[str] = mapped_column(String(16), default="active", server_default="active", index=True)
    suspended_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    deleted_at: Mapped[datetime | None] = mapped_column(UtcDateTime())


class AccountAudit(Base):
    """What an operator did to an account, who and when: kept when the account is deleted."""

    __tablename__ = "account_audit"
    __table_args__ = (Index(None, "account_id", "id"),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(String(32))  # not a foreign key: the trail outlives the row
    action: Mapped[str] = mapped_column(String(16))  # suspend, resume, delete, grant
    actor: Mapped[str] = mapped_column(String(200))
    detail: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())


class ApiKey(Base):
    __tablename__ = "api_keys"
    __table_args__ = (Index(None, "account_id", "revoked_at"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    key_type: Mapped[str] = mapped_column(String(8))
    name: Mapped[str] = mapped_column(String(200), default="")
    # The first characters of the secret, to recognise a key in lists ("vpx_live_3kTz…").
    display_prefix: Mapped[str] = mapped_column(String(24))
    secret_hash: Mapped[str] = mapped_column(String(64), unique=True)
    ip_allowlist: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    rotate_by: Mapped[datetime] = mapped_column(UtcDateTime())
    last_used_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
