"""Contribution and publisher resources (D17)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from vpx.errors import FieldError
from vpx.fields import SINGLE_LINE_PATTERN
from vpx.money import Credits

MAX_ROWS = 1000
# Every contributed field is single-line text (vpx.fields).
_TEXT: dict[str, JsonValue] = {"type": "string", "pattern": SINGLE_LINE_PATTERN}


class ContributeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    contacts: list[Any] = Field(
        min_length=1,
        max_length=MAX_ROWS,
        description="1–1,000 contributed contacts: `business_name`, `phone` (with a leading `+`), `city`, "
        "`state`, `industry`; optional `email`, `website`, `street`, `postal_code`, `specialty`. Each row "
        "is validated on its own: a bad row is `rejected` with field errors, the others go on.",
        json_schema_extra={
            "items": {
                "type": "object",
                "properties": {
                    "business_name": _TEXT,
                    "phone": {**_TEXT, "examples": ["+13035550100"]},
                    "city": _TEXT,
                    "state": _TEXT,
                    "industry": _TEXT,
                    "email": _TEXT,
                    "website": _TEXT,
                    "street": _TEXT,
                    "postal_code": _TEXT,
                    "specialty": _TEXT,
                },
            }
        },
    )


class RowResult(BaseModel):
    index: int = Field(description="Position of the row in `contacts`, from 0.")
    status: Literal["accepted", "duplicate", "rejected"]
    contact_id: str | None = Field(
        default=None,
        description="The new contact (accepted); for a duplicate, the contact it repeats, given only when "
        "your account contributed or revealed that contact (or it is the contact an earlier row of this "
        "request became).",
    )
    duplicate_of_index: int | None = Field(default=None, description="An earlier row of this request it repeats.")
    errors: list[FieldError] | None = None


class ContributeResult(BaseModel):
    results: list[RowResult]
    counts: dict[str, int] = Field(description="accepted, duplicate, rejected.")


class Contribution(BaseModel):
    contact_id: str
    business_name: str
    phone: str | None
    city: str
    state: str
    industry: str
    status: str = Field(description="active, or deactivated (no longer searchable).")
    contributed_at: datetime
    paid_reveals: int = Field(description="Reveals by other accounts that paid a share.")
    earned: Credits


class ContributionPage(BaseModel):
    contributions: list[Contribution]
    limit: int
    next_cursor: str | None


class MonthEarnings(BaseModel):
    month: str = Field(examples=["2026-11"])
    earned: Credits
    paid_reveals: int


class Earnings(BaseModel):
    revenue_share_percent: Credits
    total_earned: Credits
    paid_reveals: int
    contributed_contacts: int
    months: list[MonthEarnings] = Field(description="Newest first; months with earnings only.")
