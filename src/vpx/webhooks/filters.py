"""Signal filters of a subscription (D22's query filters) and the one matching rule, shared with the
signals domain: an fcra_blocked signal matches only a filter that asks for source_status=fcra_blocked
(D19)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator

from vpx.fields import TrimmedModel
from vpx.geography import normalise_state
from vpx.verticals import is_vertical

CATEGORIES = ("switching_intent", "bant_qualified", "funding_ma", "topic_surge", "permit_filed", "tech_install")
FILTER_FIELDS = ("category", "industry", "intent_level", "state", "source_status")


class SignalFilter(TrimmedModel):
    """Every given field must equal the signal's; an absent field matches anything."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    category: (
        Literal["switching_intent", "bant_qualified", "funding_ma", "topic_surge", "permit_filed", "tech_install"]
        | None
    ) = None
    industry: str | None = Field(default=None, description="One of the 46 verticals.")
    intent_level: Literal["hot", "warm", "cold"] | None = None
    state: str | None = Field(default=None, description="Two-letter state code.")
    source_status: Literal["available", "fcra_blocked"] | None = Field(
        default=None, description="Absent means available signals only."
    )

    @field_validator("state")
    @classmethod
    def _state(cls, value: str | None) -> str | None:
        if value is None:
            return None
        code = normalise_state(value)
        if code is None:
            raise ValueError(f"{value!r} is not a two-letter US state code")
        return code

    @field_validator("industry")
    @classmethod
    def _industry(cls, value: str | None) -> str | None:
        if value is not None and not is_vertical(value):
            raise ValueError(f"{value!r} is not one of the 46 verticals")
        return value


def signal_matches(signal_filter: Mapping[str, Any] | SignalFilter, signal: Mapping[str, Any]) -> bool:
    """Whether a signal (its D19 fields) passes a subscription's filter."""
    wanted = signal_filter.model_dump() if isinstance(signal_filter, SignalFilter) else dict(signal_filter)
    status = signal.get("source_status", "available")
    if status == "fcra_blocked" and wanted.get("source_status") != "fcra_blocked":
        return False  # D19: never in a webhook unless the filter asks for it
    for field in FILTER_FIELDS:
        value = wanted.get(field)
        if value is not None and signal.get(field) != value:
            return False
    return True
