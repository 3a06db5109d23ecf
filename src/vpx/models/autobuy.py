"""Auto-buy rules (D24), the index that finds them by vertical and state, and what they bought."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from sqlalchemy import JSON, Boolean, Date, Float, ForeignKey, Index, Integer, String, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime
from vpx.money import CreditsType


class AutoBuyRule(Base):
    """What an account wants bought as signals arrive, and how much it may spend doing so."""

    __tablename__ = "auto_buy_rules"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    industries: Mapped[list[str]] = mapped_column(JSON, default=list)
    states: Mapped[list[str]] = mapped_column(JSON, default=list)
    min_confidence: Mapped[float] = mapped_column(Float, default=0.0)
    # Empty: every category / intent level.
    categories: Mapped[list[str]] = mapped_column(JSON, default=list)
    intent_levels: Mapped[list[str]] = mapped_column(JSON, default=list)
    # None: no total budget / no daily cap (the balance still bounds spending).
    budget_credits: Mapped[Decimal | None] = mapped_column(CreditsType())
    daily_cap: Mapped[int | None] = mapped_column(Integer)
    # Skip contacts whose phone may not be called (vpx.compliance.dnc.callable).
    exclude_dnc: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    # active or paused; why it is paused (by the account, or by itself when the budget is spent).
    status: Mapped[str] = mapped_column(String(16), default="active")
    paused_reason: Mapped[str | None] = mapped_column(String(200))
    spent_total: Mapped[Decimal] = mapped_column(CreditsType(), default=Decimal(0))
    purchases_total: Mapped[int] = mapped_column(Integer, default=0)
    # The UTC day the two counters below belong to; a purchase on a later day starts them again.
    spent_day: Mapped[date | None] = mapped_column(Date)
    spent_today: Mapped[Decimal] = mapped_column(CreditsType(), default=Decimal(0))
    purchases_today: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())


class AutoBuyRuleKey(Base):
    """One row per (vertical, state) an active rule covers: matching a signal is one index lookup,
    whatever the number of rules. Rows exist only while their rule is active."""

    __tablename__ = "auto_buy_rule_keys"
    __table_args__ = (Index(None, "industry", "state", "rule_id"),)

    rule_id: Mapped[str] = mapped_column(
        ForeignKey("auto_buy_rules.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    industry: Mapped[str] = mapped_column(String(40), primary_key=True)
    state: Mapped[str] = mapped_column(String(2), primary_key=True)


class AutoBuyPurchase(Base):
    """A contact a rule bought. An account buys a contact once (D10), so at most one row per pair."""

    __tablename__ = "auto_buy_purchases"
    __table_args__ = (
        UniqueConstraint("account_id", "contact_id"),
        Index(None, "account_id", "id"),
        Index(None, "rule_id", "id"),
    )

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    rule_id: Mapped[str] = mapped_column(ForeignKey("auto_buy_rules.id", ondelete="CASCADE"))
    account_id: Mapped[str] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    signal_id: Mapped[str] = mapped_column(ForeignKey("signals.id", ondelete="CASCADE"))
    contact_id: Mapped[int] = mapped_column(BigIntPK, ForeignKey("contacts.id", ondelete="CASCADE"))
    credits_charged: Mapped[Decimal] = mapped_column(CreditsType())
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
