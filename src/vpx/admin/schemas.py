"""What the operator's account routes take and answer."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from vpx.autobuy.schemas import Budget
from vpx.fields import SingleLine
from vpx.money import Credits

AccountStatus = Literal["active", "suspended", "deleted"]


class AdminAccount(BaseModel):
    id: str
    name: str = Field(description="Erased (`(deleted)`) when the account is deleted.")
    email: str | None = Field(description="The sign-in email; erased when the account is deleted.")
    plan: str
    status: AccountStatus
    balance: Credits
    keys: int = Field(description="Active (unrevoked) API keys.")
    created_at: datetime
    last_request_at: datetime | None = Field(description="The latest use of any of its keys, to the minute.")
    suspended_at: datetime | None
    suspension_reason: str | None = Field(description="The operator's reason; never shown to the customer.")
    deleted_at: datetime | None


class AdminAccountList(BaseModel):
    accounts: list[AdminAccount]


class SuspendRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: SingleLine = Field(min_length=1, max_length=500, description="Kept in the audit trail for operators.")


class GrantRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    amount: Budget
    note: SingleLine = Field(
        default="Granted by operator", min_length=1, max_length=200, description="Shown in the ledger."
    )


class GrantResult(BaseModel):
    account_id: str
    granted: Credits
    balance: Credits


class AuditEntry(BaseModel):
    action: Literal["suspend", "resume", "delete", "grant"]
    actor: str = Field(description="`cli:<user>` or `admin:<token name>`.")
    at: datetime
    detail: dict[str, Any]


class AuditTrail(BaseModel):
    account_id: str
    entries: list[AuditEntry]


def grant_result(account_id: str, granted: Decimal, balance: Decimal) -> GrantResult:
    return GrantResult(account_id=account_id, granted=granted, balance=balance)
