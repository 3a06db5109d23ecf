"""The auto-buy resources (D24): rules and their purchases."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    WithJsonSchema,
    field_validator,
)

from vpx.fields import JsonInt, SingleLine, StateCode, TrimmedModel, Vertical
from vpx.money import Credits, quantize
from vpx.signals.schemas import Category, IntentLevel, SignalView


def _number(value: object) -> object:
    # Booleans are not numbers, and strings of digits are not JSON numbers either.
    if isinstance(value, bool | str):
        raise ValueError("must be a number")
    return value


def _to_units(value: Decimal) -> Decimal:
    # Credits are exact to 1/10,000 (D11): finer amounts are rounded half to even, as storage would.
    return quantize(value)


Confidence = Annotated[
    float, BeforeValidator(_number), Field(ge=0, le=1), WithJsonSchema({"type": "number", "minimum": 0, "maximum": 1})
]
Budget = Annotated[
    Decimal,
    BeforeValidator(_number),
    Field(ge=Decimal("0.0001"), le=1_000_000_000),
    AfterValidator(_to_units),
    WithJsonSchema({"type": "number", "minimum": 0.0001, "maximum": 1_000_000_000, "description": "Credits."}),
]
DailyCap = Annotated[
    JsonInt, Field(ge=1, le=1_000_000), WithJsonSchema({"type": "integer", "minimum": 1, "maximum": 1_000_000})
]
# Constraints inside the annotated types, so the OpenAPI document states them for optional fields too.
Industries = Annotated[list[Vertical], Field(min_length=1, max_length=46)]
States = Annotated[list[StateCode], Field(min_length=1, max_length=60)]
Categories = Annotated[list[Category], Field(min_length=1)]
IntentLevels = Annotated[list[IntentLevel], Field(min_length=1)]
RuleName = Annotated[SingleLine, Field(max_length=200)]
EXCLUDE_DNC = (
    "Skip contacts whose phone may not be called for marketing: listed on the national Do-Not-Call registry, on "
    "a person's own do-not-call request, or not checked against registry data at most 31 days old. Contacts "
    "without a phone are bought as usual."
)


def _distinct(values: list[str] | None) -> list[str] | None:
    return None if values is None else list(dict.fromkeys(values))


class RuleFields(TrimmedModel):
    """The fields a rule is made of; every one is validated on create and on update."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    _distinct_lists = field_validator("industries", "states", "categories", "intent_levels", check_fields=False)(
        _distinct
    )


class RuleCreate(RuleFields):
    name: RuleName = ""
    industries: Industries = Field(description="Verticals to buy in.")
    states: States = Field(description="Two-letter state codes.")
    min_confidence: Confidence = Field(description="Signals below this confidence are not bought.")
    categories: Categories | None = Field(default=None, description="Signal categories to buy on; absent: all.")
    intent_levels: IntentLevels | None = Field(default=None, description="Intent levels to buy on; absent: all.")
    budget_credits: Budget | None = Field(
        default=None,
        description="Total credits the rule may spend; absent: only the balance limits it.",
    )
    daily_cap: DailyCap | None = Field(default=None, description="Contacts bought per UTC day; absent: no cap.")
    exclude_dnc: StrictBool = Field(default=False, description=EXCLUDE_DNC)


class RuleUpdate(RuleFields):
    """Only the fields given change; `budget_credits` or `daily_cap` set to null removes the limit;
    null for `name`, `industries`, `states` or `min_confidence` leaves them as they are."""

    name: RuleName | None = None
    industries: Industries | None = None
    states: States | None = None
    min_confidence: Confidence | None = None
    categories: Categories | None = None
    intent_levels: IntentLevels | None = None
    budget_credits: Budget | None = None
    daily_cap: DailyCap | None = None
    exclude_dnc: StrictBool | None = Field(default=None, description=EXCLUDE_DNC)


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
    exclude_dnc: bool = Field(default=False, description=EXCLUDE_DNC)
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
    rules: list[RuleView] = Field(description="Oldest first.")
    limit: int
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null at the end.")


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
