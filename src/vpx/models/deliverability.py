"""What the MX look-ups found per email domain (vpx.deliverability)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, UtcDateTime


class EmailDomain(Base):
    """One email domain's last answer: mx_found, no_mx or unknown (null while its first look-up is
    under way). ``expires_at`` is when it is asked again (the record's TTL within the operator's
    bounds); while a worker looks it up, the end of that worker's lease."""

    __tablename__ = "email_domains"

    domain: Mapped[str] = mapped_column(String(253), primary_key=True)
    status: Mapped[str | None] = mapped_column(String(16))
    checked_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime(), index=True)
