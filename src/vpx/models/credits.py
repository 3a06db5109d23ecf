"""The append-only credit ledger (D11)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime
from vpx.money import CreditsType


class LedgerEntry(Base):
    __tablename__ = "ledger_entries"
    __table_args__ = (Index(None, "account_id", "id"),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    # grant, free_monthly, reveal, revenue_share, refund, auto_buy
    kind: Mapped[str] = mapped_column(String(32))
    amount: Mapped[Decimal] = mapped_column(CreditsType())
    balance_after: Mapped[Decimal] = mapped_column(CreditsType())
    # What the entry is about: a contact (ct_…), a rule, a batch…
    reference: Mapped[str | None] = mapped_column(String(64))
    description: Mapped[str] = mapped_column(String(500), default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
