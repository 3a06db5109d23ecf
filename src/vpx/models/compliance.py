"""What the law asks of a data broker, as tables: DROP's batches and work items, the Do-Not-Call
registry's numbers by area code, consumers' privacy requests, and the append-only audit trail."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime


class DropState(Base):
    """One row: the DROP cycle's state (vpx.compliance.drop)."""

    __tablename__ = "drop_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # VPX_DROP_API_KEY, sealed with the service's keys (vpx.secrets): rotated with every other secret.
    api_key_sealed: Mapped[str | None] = mapped_column(Text)
    # The last completed download (a batch, or DROP's "no new data" answer).
    last_pull_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    last_attempt_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    # DROP asked to come back later (202 while packaging, 429): not before this.
    retry_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    last_error: Mapped[str | None] = mapped_column(String(500))
    # The worker's warning of an open batch near its deadline, once a day across processes.
    warned_at: Mapped[datetime | None] = mapped_column(UtcDateTime())


class DropBatch(Base):
    """One download from DROP: its work items are answered within 45 days of it."""

    __tablename__ = "drop_batches"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    # The ZIP's name as DROP gave it (20260312_4821_DROP.zip).
    file_name: Mapped[str] = mapped_column(String(200))
    downloaded_at: Mapped[datetime] = mapped_column(UtcDateTime())
    deadline: Mapped[datetime] = mapped_column(UtcDateTime())
    # open (items to decide or to report), then reported.
    status: Mapped[str] = mapped_column(String(16))
    items: Mapped[int] = mapped_column(Integer)
    removed: Mapped[int] = mapped_column(Integer, default=0)
    processed_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    reported_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    upload_attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(String(500))


class DropItem(Base):
    """A work item: one hashed identifier a consumer asked to have deleted, and what vpx answered."""

    __tablename__ = "drop_items"
    __table_args__ = (UniqueConstraint("batch_id", "item_id"), Index(None, "item_id"), Index(None, "hash"))

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("drop_batches.id", ondelete="CASCADE"))
    # Email or Phone: the list it came in; file_name the CSV it came in, which the answer is named after.
    list_type: Mapped[str] = mapped_column(String(16))
    file_name: Mapped[str] = mapped_column(String(120))
    item_id: Mapped[str] = mapped_column(String(12))
    hash: Mapped[str] = mapped_column(String(44))
    # 2 exempted, 3 deleted, 4 opted out (several contacts share it), 5 not found; null until decided.
    status: Mapped[int | None] = mapped_column(SmallInteger)
    matched: Mapped[int | None] = mapped_column(Integer)
    decided_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    # The operator's declared exemption (status 2), said before the item is decided.
    exempt_reason: Mapped[str | None] = mapped_column(String(500))
    # The suppression entries this item put on the list ("12,13"): what a later withdrawal lifts.
    entry_ids: Mapped[str | None] = mapped_column(Text)
    # DROP withdrew it (a later download's Removed file).
    lifted_at: Mapped[datetime | None] = mapped_column(UtcDateTime())


class DncAreaCode(Base):
    """An area code of the national Do-Not-Call registry the operator imported, and how fresh it is."""

    __tablename__ = "dnc_area_codes"

    area_code: Mapped[str] = mapped_column(String(3), primary_key=True)
    # The registry version the numbers held are (the date its data was obtained).
    version_date: Mapped[date] = mapped_column(Date)
    imported_at: Mapped[datetime] = mapped_column(UtcDateTime())
    numbers: Mapped[int] = mapped_column(Integer)
    # full or changes: the last import's kind.
    last_kind: Mapped[str] = mapped_column(String(8))
    # Within 31 days of version_date: kept true by imports, set false by the worker when it ages out.
    # contacts.phone_dnc follows it (a stale area code's phones are unknown).
    fresh: Mapped[bool] = mapped_column(Boolean)


class DncNumber(Base):
    """A number on the registry: its ten digits as an integer (area code first)."""

    __tablename__ = "dnc_numbers"

    number: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)


class PrivacyRequest(Base):
    """A consumer's request to know, delete, correct or opt out, made directly (DROP's come as work
    items). Kept 24 months from receipt, then deleted by the worker; the audit trail keeps its
    transitions without the data points."""

    __tablename__ = "privacy_requests"
    __table_args__ = (Index(None, "received_at"), Index(None, "status", "expected_by"))

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    # access, deletion, opt_out or correction
    type: Mapped[str] = mapped_column(String(16))
    # open, fulfilled or denied
    status: Mapped[str] = mapped_column(String(16))
    received_at: Mapped[datetime] = mapped_column(UtcDateTime())
    expected_by: Mapped[datetime] = mapped_column(UtcDateTime())
    # The data points the person gave (personal data: deleted with the record).
    email: Mapped[str | None] = mapped_column(String(320))
    phone: Mapped[str | None] = mapped_column(String(20))
    name: Mapped[str | None] = mapped_column(String(300))
    postal_code: Mapped[str | None] = mapped_column(String(10))
    npi: Mapped[str | None] = mapped_column(String(10))
    details: Mapped[str | None] = mapped_column(Text)
    # Verification: the contacts found, the data points that matched the best of them, and whether
    # that is enough for the request's type.
    contact_ids: Mapped[str | None] = mapped_column(Text)
    matched: Mapped[str | None] = mapped_column(String(100))
    verified: Mapped[bool] = mapped_column(Boolean, default=False)
    # opt_out: a request that could not be verified was applied as an opt-out of sale.
    handled_as: Mapped[str | None] = mapped_column(String(16))
    decided_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    decided_by: Mapped[str | None] = mapped_column(String(100))
    deny_reason: Mapped[str | None] = mapped_column(String(32))
    note: Mapped[str | None] = mapped_column(String(1000))
    # What fulfilment produced (an access request's report, a deletion's counts), as JSON.
    resolution: Mapped[str | None] = mapped_column(Text)


class ComplianceEvent(Base):
    """The audit trail: append-only (triggers refuse updates and deletes), each entry chained to the
    one before by hash (vpx.compliance.audit). Never personal data: ids, kinds, counts, dates."""

    __tablename__ = "compliance_events"

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    occurred_at: Mapped[datetime] = mapped_column(UtcDateTime())
    kind: Mapped[str] = mapped_column(String(40))
    subject: Mapped[str] = mapped_column(String(64))
    # The entry's facts as canonical JSON: what the hash covers, with the id, time, kind and subject.
    detail: Mapped[str] = mapped_column(Text)
    previous_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))
