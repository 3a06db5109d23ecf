"""What search reads: the catalogue's vocabulary (for typo correction) and the postings of every
term (vpx.contacts.search.postings), with the changes not folded into them yet."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Index, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime


class SearchTerm(Base):
    __tablename__ = "search_terms"

    term: Mapped[str] = mapped_column(String(64), primary_key=True)


# Terms compare byte by byte on both databases (prefix look-ups are ranges): "C" on PostgreSQL,
# SQLite's default BINARY.
TermText = String(200).with_variant(String(200, collation="C"), "postgresql")


class SearchPosting(Base):
    """The ids of the active contacts that have one term, in one chunk of ids (a Roaring bitmap)."""

    __tablename__ = "search_postings"
    __table_args__ = {"sqlite_with_rowid": False}  # noqa: RUF012 (SQLAlchemy's declaration)

    term: Mapped[str] = mapped_column(TermText, primary_key=True)
    chunk: Mapped[int] = mapped_column(Integer, primary_key=True)
    ids: Mapped[bytes] = mapped_column(LargeBinary)
    size: Mapped[int] = mapped_column(Integer)


class SearchChange(Base):
    """A change to a contact's searched fields or status not yet folded into the postings, written by
    triggers on ``contacts`` with the fields as they were."""

    __tablename__ = "search_changes"
    __table_args__ = (Index(None, "contact_id"),)

    seq: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    contact_id: Mapped[int] = mapped_column(BigInteger)
    was_active: Mapped[bool] = mapped_column(Boolean)
    business_name: Mapped[str | None] = mapped_column(String(300))
    specialty: Mapped[str | None] = mapped_column(String(200))
    license_type: Mapped[str | None] = mapped_column(String(120))
    industry: Mapped[str | None] = mapped_column(String(40))
    city: Mapped[str | None] = mapped_column(String(120))
    state: Mapped[str | None] = mapped_column(String(2))
    # The email's status when the contact had an email (vpx.contacts.search.terms.email_term).
    email_status: Mapped[str | None] = mapped_column(String(16))
    # The phone's Do-Not-Call state (contacts.phone_dnc) as it was: for the search's exclude_dnc term.
    phone_dnc: Mapped[str | None] = mapped_column(String(10))


class SearchState(Base):
    """One row: the postings' generation, advanced by every merge and rebuild; and what the last
    check of the postings against the table found (vpx.contacts.search.checks)."""

    __tablename__ = "search_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    generation: Mapped[int] = mapped_column(BigInteger)
    checked_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    # The check's report: checked_terms, checked_contacts, mismatched_terms, repaired, sample…
    last_check: Mapped[dict[str, Any] | None] = mapped_column(JSON)
