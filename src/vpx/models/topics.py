"""Research activity per business, topic and UTC day: what `topic_surge` signals are computed from."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, Date, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime


class TopicActivity(Base):
    __tablename__ = "topic_activity"
    __table_args__ = (Index(None, "day", "topic"),)

    contact_id: Mapped[int] = mapped_column(
        BigIntPK, ForeignKey("contacts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    topic: Mapped[str] = mapped_column(String(200), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    events: Mapped[int] = mapped_column(BigInteger, default=0)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())
