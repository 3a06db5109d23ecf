"""Enrichment with the customer's own provider keys (D32): the keys (sealed), what each account has
enriched (per contact, per field, with provenance), the providers' answers cached, requests counted
per month, and batch jobs."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime


class EnrichmentKey(Base):
    """An account's key for one provider, sealed (vpx.secrets); only its last four characters show."""

    __tablename__ = "enrichment_keys"
    __table_args__ = (UniqueConstraint("account_id", "provider"),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    provider: Mapped[str] = mapped_column(String(32))
    key_sealed: Mapped[str] = mapped_column(Text)
    last4: Mapped[str] = mapped_column(String(4))
    monthly_limit: Mapped[int | None] = mapped_column(Integer)
    # The default waterfall order: when the account first stored a key for this provider.
    position: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class EnrichmentUsage(Base):
    """Requests sent to a provider with an account's key in a calendar month (UTC)."""

    __tablename__ = "enrichment_usage"

    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True)
    provider: Mapped[str] = mapped_column(String(32), primary_key=True)
    month: Mapped[str] = mapped_column(String(7), primary_key=True)  # 2026-11
    requests: Mapped[int] = mapped_column(Integer, default=0)


class EnrichmentCacheEntry(Base):
    """A provider's answer to one canonical request, kept per account (the account paid for it)."""

    __tablename__ = "enrichment_cache"
    __table_args__ = (UniqueConstraint("account_id", "provider", "request_key"),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    provider: Mapped[str] = mapped_column(String(32))
    request_key: Mapped[str] = mapped_column(String(64))  # sha256 of the canonical request
    found: Mapped[bool] = mapped_column(Boolean)
    # {"values": {field: [value, confidence]}, "record_id": …}
    answer: Mapped[dict[str, Any]] = mapped_column(JSON)
    fetched_at: Mapped[datetime] = mapped_column(UtcDateTime())
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime())


class EnrichmentValue(Base):
    """One enriched value an account holds for a contact: the business's (``person_key`` "") or a
    decision-maker's (``person_key``: the person's matching name), with where it came from."""

    __tablename__ = "enrichment_values"
    __table_args__ = (
        UniqueConstraint("account_id", "contact_id", "person_key", "field"),
        Index(None, "contact_id"),
    )

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    contact_id: Mapped[int] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    person_key: Mapped[str] = mapped_column(String(200), default="")
    person_name: Mapped[str | None] = mapped_column(String(200))
    field: Mapped[str] = mapped_column(String(32))
    value: Mapped[str] = mapped_column(Text)
    provider: Mapped[str] = mapped_column(String(32))
    provider_record_id: Mapped[str | None] = mapped_column(String(200))
    confidence: Mapped[float | None] = mapped_column(Float)
    fetched_at: Mapped[datetime] = mapped_column(UtcDateTime())
    # The value a refresh replaced, with where it came from: {"value", "provider", "provider_record_id",
    # "fetched_at", "confidence"}; null until a refresh replaces the value.
    previous: Mapped[dict[str, Any] | None] = mapped_column(JSON)


class EnrichmentBatch(Base):
    """A batch enrichment (`POST /contacts/batch-enrich`): run by the worker, reported to its URL."""

    __tablename__ = "enrichment_batches"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(16))  # processing or completed
    providers: Mapped[list[str] | None] = mapped_column(JSON)
    fields: Mapped[list[str] | None] = mapped_column(JSON)
    webhook_url: Mapped[str | None] = mapped_column(String(2048))
    # Signs this batch's deliveries to webhook_url, sealed (vpx.secrets); shown once, in the 202.
    webhook_secret_sealed: Mapped[str | None] = mapped_column(Text)
    total: Mapped[int] = mapped_column(Integer)
    leased_until: Mapped[datetime | None] = mapped_column(UtcDateTime())
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    completed_at: Mapped[datetime | None] = mapped_column(UtcDateTime())


class EnrichmentBatchItem(Base):
    __tablename__ = "enrichment_batch_items"

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("enrichment_batches.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    contact_id: Mapped[str] = mapped_column(String(40))
    # pending, then enriched (something found), not_found, not_found_contact, suppressed or failed
    status: Mapped[str] = mapped_column(String(24), default="pending")
    # Fields found for this contact by this batch, and the providers' attempts, as the API shows them.
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    completed_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
