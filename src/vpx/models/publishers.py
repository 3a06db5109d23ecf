"""What publishers contribute: each account's rows per UTC day, the count its daily budget is held to."""

from __future__ import annotations

from datetime import date

from sqlalchemy import Date, ForeignKey, Integer
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base


class ContributionDay(Base):
    """The rows one account sent to be contributed on one UTC day, accepted, duplicate and rejected
    alike (vpx.publishers.budget)."""

    __tablename__ = "contribution_days"

    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    rows: Mapped[int] = mapped_column(Integer)
