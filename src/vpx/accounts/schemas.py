"""The account and ledger resources."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from vpx.money import Credits


class BalanceView(BaseModel):
    total: Credits
    free: Credits = Field(description="This month's free credits left; they do not carry over.")
    paid: Credits = Field(description="Granted credits and revenue share; these carry over.")


class AccountView(BaseModel):
    id: str
    name: str
    email: str | None
    plan: str
    livemode: bool = Field(
        description="False when asked with a test key: `balance` is then the test balance, never the real one."
    )
    balance: BalanceView
    free_credits_monthly: Credits
    next_free_reset: datetime = Field(description="Start of the next UTC month.")
    active_keys: int = Field(description="Active keys of the caller's mode (live or test).")
    max_active_keys: int
    created_at: datetime


class LedgerEntryView(BaseModel):
    id: str
    kind: str = Field(
        description="grant, free_monthly, reveal, revenue_share, refund, auto_buy; in test mode also test_reset"
    )
    amount: Credits = Field(description="Signed: negative for spending.")
    balance_after: Credits
    reference: str | None
    description: str
    created_at: datetime


class LedgerPage(BaseModel):
    entries: list[LedgerEntryView]
    limit: int
    next_cursor: str | None = Field(description="Pass as `cursor` for the next (older) page; null at the end.")
