"""Visitor identification (D33): an account's sites, the visits recorded (never a full address for an
unidentified one), the last alert per business and site, and the address ranges operators import."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Float, ForeignKey, Index, Integer, SmallInteger, String
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime


class VisitorSite(Base):
    __tablename__ = "visitor_sites"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    domain: Mapped[str] = mapped_column(String(253))
    name: Mapped[str | None] = mapped_column(String(200))
    # What a visit to the site counts as research on, for topic_surge (default: the domain).
    topic: Mapped[str] = mapped_column(String(200))
    # Public, like a publishable key: it only lets a page report its views.
    site_key: Mapped[str] = mapped_column(String(40), unique=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())


class Visit(Base):
    __tablename__ = "visits"
    __table_args__ = (
        Index(None, "account_id", "occurred_at"),
        Index(None, "site_id", "occurred_at"),
        Index(None, "occurred_at"),  # the retention purge
    )

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    site_id: Mapped[str] = mapped_column(ForeignKey("visitor_sites.id", ondelete="CASCADE"))
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    occurred_at: Mapped[datetime] = mapped_column(UtcDateTime())
    url: Mapped[str] = mapped_column(String(2048))
    referrer: Mapped[str | None] = mapped_column(String(2048))
    title: Mapped[str | None] = mapped_column(String(300))
    # snippet, pixel or server
    channel: Mapped[str] = mapped_column(String(8))
    identified: Mapped[bool] = mapped_column(default=False)
    contact_id: Mapped[int | None] = mapped_column(ForeignKey("contacts.id", ondelete="SET NULL"))
    method: Mapped[str | None] = mapped_column(String(16))  # ip_range or reverse_dns
    confidence: Mapped[float | None] = mapped_column(Float)
    # unknown, isp, hosting, bot, private_address or opted_out
    reason: Mapped[str | None] = mapped_column(String(24))
    # The visitor's network, never the address: IPv4 /24, IPv6 /48 (none when opted out).
    network: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())


class VisitorAlert(Base):
    """When a business's last ``visitor.identified`` went out for a site: at most one per 30 minutes."""

    __tablename__ = "visitor_alerts"

    site_id: Mapped[str] = mapped_column(ForeignKey("visitor_sites.id", ondelete="CASCADE"), primary_key=True)
    contact_id: Mapped[int] = mapped_column(
        BigIntPK, ForeignKey("contacts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    last_alert_at: Mapped[datetime] = mapped_column(UtcDateTime())


class IpRangeSource(Base):
    """One imported file of address ranges; re-importing a source replaces its ranges at once."""

    __tablename__ = "ip_range_sources"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    format: Mapped[str] = mapped_column(String(16))  # csv, iptoasn or mmdb
    ranges: Mapped[int] = mapped_column(Integer)
    imported_at: Mapped[datetime] = mapped_column(UtcDateTime())


class IpRange(Base):
    __tablename__ = "ip_ranges"
    __table_args__ = (Index(None, "source"),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    source: Mapped[str] = mapped_column(ForeignKey("ip_range_sources.name", ondelete="CASCADE"))
    family: Mapped[int] = mapped_column(SmallInteger)  # 4 or 6
    # First and last address as decimal text: an IPv6 address does not fit a 64-bit integer.
    first: Mapped[str] = mapped_column(String(40))
    last: Mapped[str] = mapped_column(String(40))
    kind: Mapped[str] = mapped_column(String(16))  # business, isp, hosting or unknown
    domain: Mapped[str | None] = mapped_column(String(253))
    contact_id: Mapped[int | None] = mapped_column(BigInteger)  # not a foreign key: checked when used
    organisation: Mapped[str | None] = mapped_column(String(200))
    asn: Mapped[int | None] = mapped_column(BigInteger)
