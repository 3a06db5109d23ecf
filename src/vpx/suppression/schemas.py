"""The suppression feed's resources: the contacts an account revealed that were suppressed since."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from vpx.fields import JsonInt, TrimmedModel

ReasonClassName = Literal["opt_out", "do_not_contact", "fcra", "unsubscribed"]


class SuppressedContact(BaseModel):
    contact_id: str = Field(examples=["ct_1042"], description="The contact, `ct_…`: delete your copies of it.")
    reason: ReasonClassName = Field(
        description="Why, as a class: opt_out (the person asked), do_not_contact, fcra (regulated data), "
        "unsubscribed (from a sequence email, where the operator makes that apply to every account)."
    )
    suppressed_at: datetime = Field(description="When it was put on the suppression list.")


class SuppressionFeed(BaseModel):
    """Newest first; pass ``next_cursor`` as ``cursor`` for the next page (null at the end)."""

    suppressions: list[SuppressedContact]
    limit: int
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null at the end.")


class SuppressionFeedParams(TrimmedModel):
    """The query parameters of the feed. Unknown parameters are a 422, never ignored."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    limit: JsonInt = Field(default=25, ge=1, le=100, description="Page size, 1–100.")
    cursor: str | None = Field(default=None, max_length=200, description="`next_cursor` of the previous page.")
