"""Outbound sequencing (D34): the customer's mailboxes (passwords sealed), sequences and their
versions, enrollments, every message sent (its Message-ID stored before the SMTP conversation),
the account's unsubscribes, and inbound mail already read."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime


class Mailbox(Base):
    __tablename__ = "mailboxes"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    email: Mapped[str] = mapped_column(String(320))
    from_name: Mapped[str | None] = mapped_column(String(200))
    smtp_host: Mapped[str] = mapped_column(String(255))
    smtp_port: Mapped[int] = mapped_column(Integer)
    smtp_security: Mapped[str] = mapped_column(String(16))  # starttls, tls or none
    smtp_username: Mapped[str | None] = mapped_column(String(320))
    smtp_password_sealed: Mapped[str | None] = mapped_column(Text)
    imap_host: Mapped[str | None] = mapped_column(String(255))
    imap_port: Mapped[int | None] = mapped_column(Integer)
    imap_security: Mapped[str | None] = mapped_column(String(16))
    imap_username: Mapped[str | None] = mapped_column(String(320))
    imap_password_sealed: Mapped[str | None] = mapped_column(Text)
    daily_limit: Mapped[int] = mapped_column(Integer)
    send_interval_seconds: Mapped[int] = mapped_column(Integer)
    postal_address: Mapped[str] = mapped_column(Text)
    # active, or paused (with pause_reason: bounce_rate, auth_failed…)
    status: Mapped[str] = mapped_column(String(16), default="active")
    pause_reason: Mapped[str | None] = mapped_column(String(200))
    # The earliest the next message may go (spacing plus jitter).
    next_send_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    # IMAP polling: the folder's UIDVALIDITY and the last UID read; when it was last read.
    imap_uidvalidity: Mapped[int | None] = mapped_column(Integer)
    imap_last_uid: Mapped[int | None] = mapped_column(Integer)
    imap_polled_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class Sequence(Base):
    __tablename__ = "sequences"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    mailbox_id: Mapped[str] = mapped_column(ForeignKey("mailboxes.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(16), default="active")  # active or paused
    pause_reason: Mapped[str | None] = mapped_column(String(200))
    version: Mapped[int] = mapped_column(Integer, default=1)  # the current version: new enrollments use it
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class SequenceVersion(Base):
    """A sequence's steps and send window as they were at one edit: running enrollments keep theirs."""

    __tablename__ = "sequence_versions"
    __table_args__ = (UniqueConstraint("sequence_id", "version"),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    sequence_id: Mapped[str] = mapped_column(ForeignKey("sequences.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    steps: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    send_window: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())


class Enrollment(Base):
    __tablename__ = "enrollments"
    __table_args__ = (
        UniqueConstraint("sequence_id", "contact_id", "person_key"),
        # The scheduler's look-up: a sequence's active enrollments by due time.
        Index(None, "sequence_id", "status", "next_due_at"),
        Index(None, "account_id", "email"),
        Index(None, "sequence_id", "id"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    sequence_id: Mapped[str] = mapped_column(ForeignKey("sequences.id", ondelete="CASCADE"))
    version: Mapped[int] = mapped_column(Integer)
    contact_id: Mapped[int] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    # "" for the business's own address; a decision-maker's matching name when written to them.
    person_key: Mapped[str] = mapped_column(String(200), default="")
    person_name: Mapped[str | None] = mapped_column(String(200))
    email: Mapped[str] = mapped_column(String(320))
    # active, finished, replied, bounced, unsubscribed or stopped (stop_reason: by_user, suppressed…)
    status: Mapped[str] = mapped_column(String(16))
    stop_reason: Mapped[str | None] = mapped_column(String(64))
    step: Mapped[int] = mapped_column(Integer, default=0)  # the next step to run
    next_due_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    # The first message's Message-ID: later steps are sent as replies in its thread.
    thread_message_id: Mapped[str | None] = mapped_column(String(300))
    # The unsubscribe link's token (256 random bits, a capability only this recipient's emails carry):
    # its SHA-256, which a link is looked up by, and the token sealed, to write the link into emails.
    unsubscribe_digest: Mapped[str] = mapped_column(String(64), unique=True)
    unsubscribe_token_sealed: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class SequenceMessage(Base):
    """One step of one enrollment: an email (its Message-ID made and stored before any SMTP
    conversation) or a manual task."""

    __tablename__ = "sequence_messages"
    __table_args__ = (
        UniqueConstraint("enrollment_id", "step"),
        Index(None, "mailbox_id", "sent_at"),
        Index(None, "mailbox_id", "id"),  # a mailbox's last sends (its bounce rate)
        Index(None, "status", "lease_until"),
    )

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    enrollment_id: Mapped[str] = mapped_column(ForeignKey("enrollments.id", ondelete="CASCADE"))
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    mailbox_id: Mapped[str] = mapped_column(ForeignKey("mailboxes.id", ondelete="CASCADE"))
    step: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(8))  # email or task
    message_id: Mapped[str | None] = mapped_column(String(300), unique=True)
    # email: sending (claimed, before DATA), transmitting (DATA under way: in doubt after a crash),
    # sent, deferred (a 4xx: tried again later), bounced, stopped; task: open
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    lease_until: Mapped[datetime | None] = mapped_column(UtcDateTime())
    last_reply: Mapped[str | None] = mapped_column(Text)  # the SMTP server's last answer
    subject: Mapped[str | None] = mapped_column(Text)
    sent_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())


class AccountUnsubscribe(Base):
    """An address that asked an account to stop writing (one-click unsubscribe): never enrolled or
    mailed by that account again."""

    __tablename__ = "account_unsubscribes"

    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True)
    email: Mapped[str] = mapped_column(String(320), primary_key=True)
    enrollment_id: Mapped[str | None] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())


class UnsubscribeLink(Base):
    """The unsubscribe link of an enrollment deleted with its sequence, mailbox or account, kept 31
    days so that the emails already sent can still be opted out of (vpx.sequences.links)."""

    __tablename__ = "unsubscribe_links"

    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    email: Mapped[str] = mapped_column(String(320))
    sender: Mapped[str] = mapped_column(String(320))
    kept_until: Mapped[datetime] = mapped_column(UtcDateTime(), index=True)


class InboundMessage(Base):
    """Inbound mail already read (by IMAP or the inbound endpoint), so that none counts twice."""

    __tablename__ = "inbound_messages"
    __table_args__ = (UniqueConstraint("mailbox_id", "fingerprint"),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    mailbox_id: Mapped[str] = mapped_column(ForeignKey("mailboxes.id", ondelete="CASCADE"))
    fingerprint: Mapped[str] = mapped_column(String(64))  # sha256 of its Message-ID, else of its bytes
    kind: Mapped[str] = mapped_column(String(16))
    enrollment_id: Mapped[str | None] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
