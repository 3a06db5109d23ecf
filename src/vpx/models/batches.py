"""Batch reveals (D16): the request and one row per distinct id, with its outcome."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import Boolean, ForeignKey, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime
from vpx.money import CreditsType


class BatchReveal(Base):
    __tablename__ = "batch_reveals"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    # processing (items still to reveal, by the worker) or completed.
    status: Mapped[str] = mapped_column(String(16))
    webhook_url: Mapped[str | None] = mapped_column(String(2048))
    # Signs this batch's deliveries to webhook_url (sealed by vpx.secrets); shown once, in the 202.
    webhook_secret_sealed: Mapped[str | None] = mapped_column(Text)
    total: Mapped[int] = mapped_column(Integer)
    # Leave out contacts whose phone may not be called (vpx.compliance.dnc.callable).
    exclude_dnc: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    leased_until: Mapped[datetime | None] = mapped_column(UtcDateTime())
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    completed_at: Mapped[datetime | None] = mapped_column(UtcDateTime())


class BatchRevealItem(Base):
    __tablename__ = "batch_reveal_items"

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("batch_reveals.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    contact_id: Mapped[str] = mapped_column(String(40))
    # pending, then revealed, already_revealed, not_found, suppressed or insufficient_credits.
    status: Mapped[str] = mapped_column(String(24), default="pending")
    credits_charged: Mapped[Decimal] = mapped_column(CreditsType(), default=Decimal(0))
    completed_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
