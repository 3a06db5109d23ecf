"""The auto-buy resources (D24): rules and their purchases."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from vpx.fields import JsonInt, StateCode, Vertical
from vpx.money import Credits
from vpx.signals.schemas import Category, IntentLevel, SignalView


def _number(value: object) -> object:
    # Booleans are not numbers, and strings of digits are not JSON numbers either.
    if isinstance(value, bool | str):
        raise ValueError("must be a number")
    return value


Number = Annotated[float, BeforeValidator(_number)]
CreditAmount = Annotated[Decimal, BeforeValidator(_number)]


def _distinct(values: list[str] | None) -> list[str] | None:
    return None if values is None else list(dict.fromkeys(values))


def _whole_units(value: Decimal | None) -> Decimal | None:
    if value is not None and value != value.quantize(Decimal("0.0001")):
        raise ValueError("credits are exact to 1/10,000; use at most 4 decimal places")
    return value


class RuleFields(BaseModel):
    """The fields a rule is made of; every one is validated on create and on update."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    _distinct_lists = field_validator("industries", "states", "categories", "intent_levels", check_fields=False)(
        _distinct
    )
    _budget = field_validator("budget_credits", check_fields=False)(_whole_units)


class RuleCreate(RuleFields):
    name: str = Field(default="", max_length=200)
    industries: list[Vertical] = Field(min_length=1, max_length=46, description="Verticals to buy in (D18).")
    states: list[StateCode] = Field(min_length=1, max_length=60, description="Two-letter state codes.")
    min_confidence: Number = Field(ge=0, le=1, description="Signals below this confidence are not bought.")
    categories: list[Category] | None = Field(
        default=None, min_length=1, description="Signal categories to buy on; absent: all."
    )
    intent_levels: list[IntentLevel] | None = Field(
        default=None, min_length=1, description="Intent levels to buy on; absent: all."
    )
    budget_credits: CreditAmount | None = Field(
        default=None,
        gt=0,
        max_digits=14,
        description="Total credits the rule may spend; absent: only the balance limits it.",
    )
    daily_cap: JsonInt | None = Field(
        default=None, ge=1, le=1_000_000, description="Contacts bought per UTC day; absent: no cap."
    )


class RuleUpdate(RuleFields):
    """Only the fields given change; `budget_credits` or `daily_cap` set to null removes the limit."""

    name: str | None = Field(default=None, max_length=200)
    industries: list[Vertical] | None = Field(default=None, min_length=1, max_length=46)
    states: list[StateCode] | None = Field(default=None, min_length=1, max_length=60)
    min_confidence: Number | None = Field(default=None, ge=0, le=1)
    categories: list[Category] | None = Field(default=None, min_length=1)
    intent_levels: list[IntentLevel] | None = Field(default=None, min_length=1)
    budget_credits: CreditAmount | None = Field(default=None, gt=0, max_digits=14)
    daily_cap: JsonInt | None = Field(default=None, ge=1, le=1_000_000)


class RuleView(BaseModel):
    id: str = Field(examples=["abr_3kTz9aQ1xYb2LmN0"])
    name: str
    industries: list[str]
    states: list[str]
    min_confidence: float
    categories: list[str] | None
    intent_levels: list[str] | None
    budget_credits: Credits | None
    daily_cap: int | None
    status: Literal["active", "paused"]
    paused_reason: str | None = Field(description="Why the rule is paused: by the account, or its budget is spent.")
    spent_today: Credits = Field(description="Credits spent this UTC day.")
    purchases_today: int = Field(description="Contacts bought this UTC day (counts against `daily_cap`).")
    spent_total: Credits
    purchases_total: int
    budget_remaining: Credits | None
    created_at: datetime
    updated_at: datetime


class RuleList(BaseModel):
    rules: list[RuleView]


class PurchaseView(BaseModel):
    id: str = Field(examples=["abp_42"])
    rule_id: str
    signal_id: str
    contact_id: str
    credits_charged: Credits
    created_at: datetime
    signal: SignalView | None = Field(description="The signal that set the purchase off.")


class PurchasePage(BaseModel):
    purchases: list[PurchaseView]
    limit: int
    next_cursor: str | None
