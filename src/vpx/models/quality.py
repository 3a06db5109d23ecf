"""Data that proved wrong (vpx.quality): buyers' reports on the fields they revealed, with the
trail of who decided what; the fields found bad; the refunds paid for them; and the hard bounces the
sequences saw, waiting for the worker to apply the refund rules."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import ForeignKey, Index, String, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime
from vpx.money import CreditsType


class ContactReport(Base):
    """An account's report that a field of a contact it revealed is wrong: one per account, contact
    and field (a repeat answers the first)."""

    __tablename__ = "contact_reports"
    __table_args__ = (
        UniqueConstraint("account_id", "contact_id", "field"),
        Index(None, "contact_id", "field"),
        Index(None, "status", "id"),
    )

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    contact_id: Mapped[int] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    # phone, email, website or address
    field: Mapped[str] = mapped_column(String(16))
    # wrong, disconnected or closed_business
    problem: Mapped[str] = mapped_column(String(32))
    # The reporter's own words: shown to the reporter and the operator, never to other accounts.
    note: Mapped[str] = mapped_column(String(500), default="")
    # The field as it read when reported, and its digest (vpx.quality.fields.value_key): reports
    # agree only about the same value, so a value a registry replaced since is not held against the new.
    value: Mapped[str] = mapped_column(String(500))
    value_key: Mapped[str] = mapped_column(String(64))
    # open, confirmed or dismissed
    status: Mapped[str] = mapped_column(String(16), default="open")
    # A keyed hash of the network the report came from (vpx.quality.trust): reports from one network
    # count as one buyer's.
    network_key: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    resolved_at: Mapped[datetime | None] = mapped_column(UtcDateTime())


class ReportAction(Base):
    """The audit trail of a report: who opened, confirmed or dismissed it, when, and why."""

    __tablename__ = "contact_report_actions"

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    report_id: Mapped[int] = mapped_column(ForeignKey("contact_reports.id", ondelete="CASCADE"), index=True)
    # opened, confirmed or dismissed
    action: Mapped[str] = mapped_column(String(16))
    # account:<id>, rule:two_accounts, rule:bounce, rule:field_bad, cli:<user> or admin:<token name>
    actor: Mapped[str] = mapped_column(String(120))
    note: Mapped[str] = mapped_column(String(500), default="")
    at: Mapped[datetime] = mapped_column(UtcDateTime())


class BadField(Base):
    """A contact's field found bad (two reports, a bounce, an operator): one row per value, whose
    insert is what tells past buyers (``contact.corrected``) exactly once."""

    __tablename__ = "bad_fields"
    __table_args__ = (UniqueConstraint("contact_id", "field", "value_key"),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    contact_id: Mapped[int] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    field: Mapped[str] = mapped_column(String(16))
    value_key: Mapped[str] = mapped_column(String(64))
    # bounced, wrong, disconnected or closed_business
    problem: Mapped[str] = mapped_column(String(32))
    # rule:two_accounts, rule:bounce, cli:<user> or admin:<token name>
    decided_by: Mapped[str] = mapped_column(String(120))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())


class DataRefund(Base):
    """Credits given back for a revealed field that proved bad: at most one per reveal and field
    (the unique triple), never more in all than the reveal cost. Its ledger entry is a ``refund``."""

    __tablename__ = "data_refunds"
    __table_args__ = (UniqueConstraint("account_id", "contact_id", "field"), Index(None, "created_at"))

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    contact_id: Mapped[int] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    field: Mapped[str] = mapped_column(String(16))
    # What was given back (to the pools the reveal was paid from).
    credits: Mapped[Decimal] = mapped_column(CreditsType())
    # The part of the field's share not given back, and why: monthly_limit (the account's refunds this
    # month reached the limit) or free_credits_expired (paid with free credits of a month gone by).
    withheld: Mapped[Decimal] = mapped_column(CreditsType(), default=Decimal(0), server_default="0")
    withheld_reason: Mapped[str | None] = mapped_column(String(32))
    # own_bounce (the buyer's own sequence), bounce, reports, operator
    reason: Mapped[str] = mapped_column(String(16))
    report_id: Mapped[int | None] = mapped_column(ForeignKey("contact_reports.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())


class SequenceBounce(Base):
    """A hard bounce of a contact's email in an account's sequence, written with the bounce; the
    worker applies the refund rules to it and sets ``reviewed_at``."""

    __tablename__ = "sequence_bounces"
    __table_args__ = (
        Index(
            "ix_sequence_bounces_waiting",
            "id",
            sqlite_where=text("reviewed_at IS NULL"),
            postgresql_where=text("reviewed_at IS NULL"),
        ),
        Index(None, "contact_id"),
    )

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    contact_id: Mapped[int] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    email: Mapped[str] = mapped_column(String(320))
    bounced_at: Mapped[datetime] = mapped_column(UtcDateTime())
    reviewed_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    # When more than the bouncing account's own mail server agreed (vpx.quality.bounces.corroborated):
    # the MX check, or an unrelated paying account's bounce. Null: it refunded only that account.
    corroborated_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
