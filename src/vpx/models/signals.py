"""Intent signals (D19) and the counter that numbers them in commit order for streams (D23)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime

SIGNAL_COUNTER_ID = 1


class Signal(Base):
    """One observed intent signal. Never updated after ingestion: an fcra_blocked signal stays so (D21)."""

    __tablename__ = "signals"
    __table_args__ = (
        UniqueConstraint("source", "source_record_id"),
        # D22: every filter with the newest-first order (sequence) behind it, so a page is an index
        # range walk; `since` compares created_at, which grows with sequence.
        Index(None, "category", "sequence"),
        Index(None, "industry", "sequence"),
        Index(None, "state", "sequence"),
        Index(None, "intent_level", "sequence"),
        Index(None, "source_status", "sequence"),
        # The commonest pair of filters (a vertical in a state): without it SQLite walks the vertical's
        # every signal to fill a page of a rare combination (p99 57 ms at 1,000,000 signals).
        Index(None, "industry", "state", "sequence"),
        Index(None, "created_at"),
        Index(None, "contact_id"),
    )

    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    # Assigned under the counter's row lock, held until commit: a reader of `sequence > n` never skips
    # a row that commits later with a lower number.
    sequence: Mapped[int] = mapped_column(BigInteger, unique=True)
    category: Mapped[str] = mapped_column(String(24))
    industry: Mapped[str] = mapped_column(String(40))
    intent_level: Mapped[str] = mapped_column(String(8))
    source_status: Mapped[str] = mapped_column(String(16))
    confidence: Mapped[float] = mapped_column(Float)
    topic: Mapped[str | None] = mapped_column(String(200))
    state: Mapped[str] = mapped_column(String(2))
    city: Mapped[str | None] = mapped_column(String(120))
    summary: Mapped[str | None] = mapped_column(Text)
    evidence: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    contact_id: Mapped[int | None] = mapped_column(BigIntPK, ForeignKey("contacts.id", ondelete="SET NULL"))
    # Where the signal comes from (evidence, permits:chicago, edgar, topic_surge) and the record's id
    # there: re-ingesting the same record is a no-op.
    source: Mapped[str] = mapped_column(String(40))
    source_record_id: Mapped[str | None] = mapped_column(String(200))
    observed_at: Mapped[datetime] = mapped_column(UtcDateTime())
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())


class SignalCounter(Base):
    """One row: the last signal sequence handed out. Its row lock orders ingest transactions."""

    __tablename__ = "signal_counters"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    value: Mapped[int] = mapped_column(BigInteger, default=0)
