"""The suppression list (D15), the audit of reveals it refused, and the notices its entries sent to
the accounts that had revealed a contact before it was suppressed."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime


class Suppression(Base):
    __tablename__ = "suppressions"
    # created_at: the worker's sweep reads the entries of the last few minutes (vpx.suppression.sweep).
    __table_args__ = (UniqueConstraint("kind", "value"), Index(None, "created_at"))

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    # contact (value = ct_…), phone (E.164) or email (lower case); email_hash or phone_hash (DROP's
    # hash: covers every contact whose hash it is, now or imported later); do_not_call (E.164: the
    # person's own request not to be called, which covers the phone channel only, not the contact).
    kind: Mapped[str] = mapped_column(String(16))
    value: Mapped[str] = mapped_column(String(320))
    # fcra, opt_out or do_not_contact; drop_deletion, drop_opt_out and deletion_request (consumers'
    # requests, vpx.compliance); do_not_call; unsubscribed
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


class SuppressionNotice(Base):
    """A contact an account revealed, then suppressed: one row per account and contact, written with
    the suppression (its ``contact.suppressed`` event queued in the same transaction). Its id orders
    the account's feed; ids are handed out in commit order (vpx.suppression.notices)."""

    __tablename__ = "suppression_notices"
    __table_args__ = (UniqueConstraint("account_id", "contact_id"), Index(None, "account_id", "id"))

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    contact_id: Mapped[int] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    suppression_id: Mapped[int | None] = mapped_column(ForeignKey("suppressions.id", ondelete="SET NULL"))
    # The reason's class (opt_out, do_not_contact, fcra, unsubscribed), never the entry's note.
    reason: Mapped[str] = mapped_column(String(32))
    suppressed_at: Mapped[datetime] = mapped_column(UtcDateTime())
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
