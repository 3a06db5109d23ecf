"""Registry imports: what each imported record became, the NUCC code set, decision-makers, and SEC
companies (which have no address of their own, so they live beside the contacts, not in them)."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, Boolean, Date, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime


class RegistryRecord(Base):
    """The importer's bookkeeping for one registry record (public provenance is ``contact_sources``).

    ``row_hash`` lets a re-import skip records that did not change; ``kind`` keeps two people of one
    registry from ever merging; ``active`` is the record's own state (an NPI can be deactivated while
    the contact it merged into stays active through another source).
    """

    __tablename__ = "registry_records"
    __table_args__ = (UniqueConstraint("registry", "record_id"), Index(None, "contact_id"))

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    registry_name: Mapped[str] = mapped_column("registry", String(32))
    record_id: Mapped[str] = mapped_column(String(64))
    contact_id: Mapped[int] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    # organization or person
    kind: Mapped[str] = mapped_column(String(16))
    active: Mapped[bool] = mapped_column(Boolean)
    # True when this record created the contact: its updates overwrite the contact's fields, while a
    # record merged into an existing contact only fills the fields that are empty.
    owns_contact: Mapped[bool] = mapped_column(Boolean)
    # The registry's own status words, e.g. CSLB "CLEAR" or "Work Comp Susp".
    registry_status: Mapped[str | None] = mapped_column(String(64))
    row_hash: Mapped[str] = mapped_column(String(16))
    file_date: Mapped[date | None] = mapped_column(Date)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class TaxonomyCode(Base):
    """The NUCC Health Care Provider Taxonomy code set (`vpx import nucc`)."""

    __tablename__ = "taxonomy_codes"

    code: Mapped[str] = mapped_column(String(10), primary_key=True)
    grouping: Mapped[str] = mapped_column(String(200))
    classification: Mapped[str] = mapped_column(String(200))
    specialization: Mapped[str | None] = mapped_column(String(200))
    # The specialty shown on contacts: "Classification, Specialization" or the classification alone.
    specialty: Mapped[str] = mapped_column(String(200))
    vertical: Mapped[str] = mapped_column(String(40))
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class DecisionMaker(Base):
    """A person with authority at a business, as a registry names them (D31)."""

    __tablename__ = "decision_makers"
    __table_args__ = (Index(None, "contact_id"), Index(None, "registry", "record_id"))

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    contact_id: Mapped[int] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    title: Mapped[str | None] = mapped_column(String(200))
    # authorized_official, owner, partner, officer, qualifier
    role: Mapped[str] = mapped_column(String(32))
    # E.164; shown only to an account that revealed the contact (D31).
    phone: Mapped[str | None] = mapped_column(String(20))
    registry_name: Mapped[str] = mapped_column("registry", String(32))
    record_id: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())


class Company(Base):
    """An SEC filer by CIK. Linked to a contact when one matches or once an address is known."""

    __tablename__ = "companies"
    __table_args__ = (Index(None, "name_key"),)

    cik: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(String(300))
    name_key: Mapped[str] = mapped_column(String(300))
    # The first ticker of the SEC list (ordered by market value); all of them in company_tickers.
    ticker: Mapped[str | None] = mapped_column(String(16))
    exchange: Mapped[str | None] = mapped_column(String(16))
    contact_id: Mapped[int | None] = mapped_column(ForeignKey("contacts.id", ondelete="SET NULL"), index=True)
    # The latest filing date seen in an EDGAR index.
    last_filed_on: Mapped[date | None] = mapped_column(Date)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class CompanyTicker(Base):
    __tablename__ = "company_tickers"

    ticker: Mapped[str] = mapped_column(String(16), primary_key=True)
    cik: Mapped[int] = mapped_column(ForeignKey("companies.cik", ondelete="CASCADE"), index=True)
    exchange: Mapped[str | None] = mapped_column(String(16))


class PossibleDuplicate(Base):
    """Two contacts that the matching rules would have joined but conflicting strong evidence kept
    apart (vpx.registries.matching): for an operator to merge or dismiss. ``contact_id`` is the older."""

    __tablename__ = "possible_duplicates"
    __table_args__ = (UniqueConstraint("contact_id", "other_contact_id"), Index(None, "status", "id"))

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    contact_id: Mapped[int] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    other_contact_id: Mapped[int] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"), index=True)
    # phone, website, house_number, licence, npi, ein, cik: the evidence they disagree on
    reason: Mapped[str] = mapped_column(String(16))
    # The rapidfuzz similarity of their matching names, 0-100.
    name_score: Mapped[int] = mapped_column(Integer)
    # Where the pair was found: a registry import (registry:nppes), evidence (signals:<source>), contributions.
    found_by: Mapped[str] = mapped_column(String(64))
    # open, merged or dismissed
    status: Mapped[str] = mapped_column(String(16), default="open")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    resolved_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    resolved_by: Mapped[str | None] = mapped_column(String(120))
