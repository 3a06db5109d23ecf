"""The suppression list (D15) and the audit of reveals it refused."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime


class Suppression(Base):
    __tablename__ = "suppressions"
    __table_args__ = (UniqueConstraint("kind", "value"),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    # contact (value = ct_…), phone (E.164) or email (lower case)
    kind: Mapped[str] = mapped_column(String(16))
    value: Mapped[str] = mapped_column(String(320))
    # fcra, opt_out or do_not_contact
    reason: Mapped[str] = mapped_column(String(32))
    note: Mapped[str] = mapped_column(String(500), default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())


class SuppressionHit(Base):
    __tablename__ = "suppression_hits"

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    contact_id: Mapped[int] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    suppression_id: Mapped[int] = mapped_column(ForeignKey("suppressions.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
