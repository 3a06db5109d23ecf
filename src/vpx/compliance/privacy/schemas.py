"""The privacy request resources: what a person sends, and what the operator sees and decides."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from vpx.fields import MultiLine, SingleLine, TrimmedModel

RequestType = Literal["access", "deletion", "opt_out", "correction"]
RequestStatus = Literal["open", "fulfilled", "denied"]
DenyReason = Literal["no_match", "insuf_verification", "exempt", "not_a_consumer", "other"]


class PrivacyRequestCreate(TrimmedModel):
    """A person's request. Give what identifies you in the catalogue: an email or phone (or an NPI)
    finds the record; each further detail that matches it verifies the request."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, strict=True)

    type: RequestType = Field(
        description="`access` (what the catalogue holds on you and who bought it), `deletion`, `opt_out` (of "
        "sale: takes effect at once), `correction`."
    )
    email: SingleLine | None = Field(default=None, max_length=320, examples=["pat.doe@example.com"])
    phone: SingleLine | None = Field(default=None, max_length=40, examples=["+1 202 555 0143"])
    name: SingleLine | None = Field(default=None, max_length=200, description="Your name as a registry lists it.")
    postal_code: SingleLine | None = Field(default=None, max_length=10, description="Your practice's ZIP code.")
    npi: SingleLine | None = Field(
        default=None, max_length=10, pattern=r"^[0-9]{10}$", description="Your National Provider Identifier."
    )
    details: MultiLine | None = Field(
        default=None, max_length=2000, description="What to correct, or anything else the operator should know."
    )

    @model_validator(mode="after")
    def _something_to_find(self) -> PrivacyRequestCreate:
        if not (self.email or self.phone or self.npi):
            raise ValueError("give an email, a phone or an NPI: the catalogue is searched by them")
        return self


class PrivacyRequestReceived(BaseModel):
    id: str = Field(examples=["pr_3kTz9aQ1xYb2LmN0"], description="Quote it when you write to the operator.")
    type: RequestType
    status: RequestStatus = Field(
        description="`open` until the operator answers it; an opt-out is `fulfilled` at once (it needs no check)."
    )
    received_at: datetime
    expected_by: datetime = Field(description="The answer is due by then: 45 days after the request.")


class Verification(BaseModel):
    verified: bool = Field(description="Enough data points matched one record for the request's type.")
    matched: list[str] = Field(description="The data points that matched the best record (email, phone, name…).")
    contacts: list[str] = Field(description="The contacts found (`ct_…`).")
    handled_as: Literal["opt_out"] | None = Field(
        description="`opt_out` when the request could not be verified and was applied as an opt-out of sale."
    )


class PrivacyRequestView(BaseModel):
    id: str
    type: RequestType
    status: RequestStatus
    received_at: datetime
    expected_by: datetime
    days_left: float = Field(description="Days until `expected_by` (negative when late); 0 once answered.")
    email: str | None
    phone: str | None
    name: str | None
    postal_code: str | None
    npi: str | None
    details: str | None
    verification: Verification
    decided_at: datetime | None
    decided_by: str | None
    deny_reason: DenyReason | None
    note: str | None
    resolution: dict[str, Any] | None = Field(
        description="What fulfilment produced: an access request's report (what the catalogue holds, and how many "
        "accounts bought each record and when, never who), a deletion's counts, an opt-out's entries."
    )


class PrivacyRequestList(BaseModel):
    requests: list[PrivacyRequestView] = Field(description="Soonest due first.")


class FulfilRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    note: MultiLine | None = Field(default=None, max_length=1000, description="Kept with the request.")


class DenyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    reason: DenyReason = Field(
        description="`no_match` (no record of the person), `insuf_verification` (could not be verified), `exempt` "
        "(the information is exempt), `not_a_consumer`, `other`."
    )
    note: MultiLine | None = Field(default=None, max_length=1000)
