"""The contact catalogue, where each contact came from, and who revealed what."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from sqlalchemy import Boolean, Date, ForeignKey, Index, SmallInteger, String, Text, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime
from vpx.money import CreditsType


class Contact(Base):
    __tablename__ = "contacts"
    __table_args__ = (
        Index(None, "state", "city_key"),
        Index(None, "industry", "state"),
        Index(None, "phone"),
        Index(None, "website_domain"),
        Index(None, "name_key", "state", "city_key"),
        Index(None, "specialty_key"),
        Index(None, "license_type_key"),
        # Deliverability (vpx.deliverability.service): the emails the worker has not checked, the
        # contacts of one email domain, and those waiting for their domain's MX look-up.
        Index(
            "ix_contacts_email_unchecked",
            "id",
            sqlite_where=text("email IS NOT NULL AND email_checked_at IS NULL"),
            postgresql_where=text("email IS NOT NULL AND email_checked_at IS NULL"),
        ),
        Index(
            "ix_contacts_email_domain",
            "email_domain",
            sqlite_where=text("email_domain IS NOT NULL"),
            postgresql_where=text("email_domain IS NOT NULL"),
        ),
        # DROP's hashes of the email and the phone (vpx.compliance.hashing): a batch's work items are
        # matched through them, and suppression entries by hash cover the contacts that have them.
        Index(
            "ix_contacts_email_hash",
            "email_hash",
            sqlite_where=text("email_hash IS NOT NULL"),
            postgresql_where=text("email_hash IS NOT NULL"),
        ),
        Index(
            "ix_contacts_phone_hash",
            "phone_hash",
            sqlite_where=text("phone_hash IS NOT NULL"),
            postgresql_where=text("phone_hash IS NOT NULL"),
        ),
        Index(
            "ix_contacts_email_waiting",
            "email_domain",
            sqlite_where=text("email_status = 'valid_syntax'"),
            postgresql_where=text("email_status = 'valid_syntax'"),
        ),
    )

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    business_name: Mapped[str] = mapped_column(String(300))
    # Normalised for matching: lower case, no punctuation, no legal suffix.
    name_key: Mapped[str] = mapped_column(String(300))
    street: Mapped[str | None] = mapped_column(String(300))
    city: Mapped[str] = mapped_column(String(120))
    city_key: Mapped[str] = mapped_column(String(120))
    state: Mapped[str] = mapped_column(String(2))
    postal_code: Mapped[str | None] = mapped_column(String(10))
    country: Mapped[str] = mapped_column(String(2), default="US")
    phone: Mapped[str | None] = mapped_column(String(20))
    email: Mapped[str | None] = mapped_column(String(320))
    # The email's deliverability (vpx.deliverability): its status (unknown until the worker checks
    # it; a changed email goes back to unknown, by trigger), its flags ("disposable,role"), when the
    # status was worked out, and its domain as the DNS is asked (set by the check).
    email_status: Mapped[str] = mapped_column(String(16), default="unknown", server_default="unknown")
    email_flags: Mapped[str | None] = mapped_column(String(32))
    email_checked_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    email_domain: Mapped[str | None] = mapped_column(String(253))
    website: Mapped[str | None] = mapped_column(String(300))
    # The website's registrable domain (vpx.contacts.identifiers.registrable_domain): what visitor
    # identification matches a reverse-DNS name against (D33).
    website_domain: Mapped[str | None] = mapped_column(String(253))
    industry: Mapped[str] = mapped_column(String(40))
    specialty: Mapped[str | None] = mapped_column(String(200))
    specialty_key: Mapped[str | None] = mapped_column(String(200))
    license_type: Mapped[str | None] = mapped_column(String(120))
    license_type_key: Mapped[str | None] = mapped_column(String(120))
    license_number: Mapped[str | None] = mapped_column(String(64))
    license_state: Mapped[str | None] = mapped_column(String(2))
    # Strong identifiers beyond phone and website, "kind:value" tokens (vpx.contacts.identifiers):
    # what entity resolution must not see two records disagree on.
    identifiers: Mapped[str | None] = mapped_column(Text)
    # active, or deactivated (kept for history, out of search and reveal).
    status: Mapped[str] = mapped_column(String(16), default="active")
    # registry, demo or contributed: where the record as a whole comes from.
    origin: Mapped[str] = mapped_column(String(16), default="registry")
    # D9: the highest intent level among the contact's available signals; sets the reveal price.
    intent_level: Mapped[str | None] = mapped_column(String(8))
    publisher_account_id: Mapped[str | None] = mapped_column(ForeignKey("accounts.id", ondelete="SET NULL"), index=True)
    # The current values found bad, as bits (vpx.quality.fields.BITS): later reveals neither show nor
    # charge for them. A trigger clears a field's bit when its value changes, whatever wrote it.
    bad_fields: Mapped[int] = mapped_column(SmallInteger, default=0, server_default="0")
    # Whether an entry of the suppression list covers the contact (its id, phone or email): out of
    # search and previews, never revealed. Kept by a trigger when a contact is added or its phone or
    # email changes, and by vpx.suppression.service when an entry is added.
    suppressed: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    # DROP's unsalted SHA-256/Base64 hashes of the email and the phone, and whether the phone may be
    # called as far as the Do-Not-Call data knows: null without a phone, else unknown (its area code
    # not imported, or its data older than 31 days), listed, clear, or requested (the person asked
    # vpx not to be called). All three kept by a trigger whatever writes the contact; phone_dnc also
    # by the DNC import and the worker when an area code's data ages out (vpx.compliance.dnc).
    email_hash: Mapped[str | None] = mapped_column(String(44))
    phone_hash: Mapped[str | None] = mapped_column(String(44))
    phone_dnc: Mapped[str | None] = mapped_column(String(10))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class ContactSource(Base):
    """Provenance: one row per registry record merged into a contact."""

    __tablename__ = "contact_sources"
    __table_args__ = (UniqueConstraint("registry", "record_id"),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    contact_id: Mapped[int] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"), index=True)
    registry_name: Mapped[str] = mapped_column("registry", String(32))
    record_id: Mapped[str] = mapped_column(String(64))
    file_date: Mapped[date | None] = mapped_column(Date)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())


class Reveal(Base):
    """An account's unlocked contact; the unique pair is what makes a second reveal free (D10)."""

    __tablename__ = "reveals"
    __table_args__ = (UniqueConstraint("account_id", "contact_id"), Index(None, "contact_id"))

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    contact_id: Mapped[int] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    credits_charged: Mapped[Decimal] = mapped_column(CreditsType())
    # How it was bought: reveal, batch, purchase (of a signal), auto_buy.
    channel: Mapped[str] = mapped_column(String(16), default="reveal")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    # The part of the price paid with free credits: a refund goes back to the pool it came from.
    free_spent: Mapped[Decimal] = mapped_column(CreditsType(), default=Decimal(0), server_default="0")
    # The fields the reveal sold, as bits (vpx.quality.fields.BITS); null for reveals made before
    # this was kept, which sold every field the contact had.
    fields_sold: Mapped[int | None] = mapped_column(SmallInteger)
