"""Enrichment's request and response bodies (D32)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, field_validator

from vpx.enrichment.providers import provider_names
from vpx.enrichment.providers.base import ALL_FIELDS
from vpx.fields import json_integer

FieldName = Literal[
    "email",
    "phone",
    "website",
    "linkedin_url",
    "employee_count",
    "decision_maker.email",
    "decision_maker.phone",
    "decision_maker.title",
    "decision_maker.linkedin_url",
]
assert set(FieldName.__args__) == set(ALL_FIELDS)  # type: ignore[attr-defined]

_NO_CONTROL = r"^[^\x00-\x20\x7f]+$"
# A provider's name: the adapters registered in this installation (vpx.enrichment.providers); the
# service refuses any other with a 422 naming the known ones.
ProviderName = Annotated[str, Field(max_length=32, json_schema_extra={"enum": provider_names()})]


class ProviderKeyBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    api_key: str = Field(min_length=4, max_length=500, pattern=_NO_CONTROL, description="Your key at the provider.")
    monthly_limit: Annotated[int, Field(ge=1, le=1_000_000_000), BeforeValidator(json_integer)] | None = Field(
        default=None, description="Requests vpx may send with this key each calendar month."
    )


class ProviderKeyView(BaseModel):
    provider: str = Field(examples=["hunter"])
    last4: str = Field(description="The key's last four characters; the key itself is never shown again.")
    monthly_limit: int | None
    requests_this_month: int = Field(description="Requests sent with this key this calendar month (UTC).")
    created_at: datetime
    updated_at: datetime


class ProviderKeyList(BaseModel):
    keys: list[ProviderKeyView] = Field(description="In waterfall order: the order the keys were first stored.")


class EnrichRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    providers: list[ProviderName] | None = Field(
        default=None,
        min_length=1,
        max_length=20,
        json_schema_extra={"uniqueItems": True},
        description="The waterfall, in order. Default: every provider the account has a key for, in the order "
        "the keys were first stored.",
    )
    fields: list[FieldName] | None = Field(
        default=None, min_length=1, description="Fields to fill. Default: every supported field."
    )
    refresh: StrictBool = Field(
        default=False,
        description="Ask the providers again for the fields, even those the account already holds a value for, "
        "without the cached answers. A value found replaces the one held (kept as `previous`); a provider "
        "that finds nothing replaces nothing.",
    )
    dry_run: StrictBool = Field(
        default=False, description="Say which providers would be asked for which fields; call none."
    )

    @field_validator("providers")
    @classmethod
    def _distinct(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and len(set(value)) != len(value):
            raise ValueError("a provider may appear once")
        return value


class PreviousValue(BaseModel):
    """A value a refresh replaced, with where it came from."""

    value: str
    provider: str = Field(description="The provider that found it.")
    provider_record_id: str | None = Field(default=None, description="The provider's own id of the record.")
    fetched_at: datetime = Field(description="When the provider answered.")
    confidence: float | None = Field(default=None, description="0-1, when the provider says how sure it is.")


class FieldValue(PreviousValue):
    """A value the account holds, with where it came from."""

    previous: PreviousValue | None = Field(
        default=None,
        description="The value a refresh replaced (a different value, or another provider's), with where it "
        "came from; null until a refresh replaces the value.",
    )


class DecisionMakerFields(BaseModel):
    name: str
    title: str | None = Field(description="As the registry gives it.")
    fields: dict[str, FieldValue] = Field(description="email, phone, title, linkedin_url found for this person.")


class ProviderError(BaseModel):
    code: Literal[
        "provider_auth_failed",
        "provider_quota_exhausted",
        "provider_timeout",
        "provider_unavailable",
        "provider_bad_response",
        "rate_limited",
    ]
    message: str | None = None


class Attempt(BaseModel):
    provider: str
    status: Literal["found", "not_found", "skipped", "cached", "rate_limited", "error", "planned"] = Field(
        description="`planned`: a dry run would ask it (when the providers before it leave the fields missing)."
    )
    fields: list[str] = Field(description="The missing fields it can give: what it was (or would be) asked for.")
    found: list[str] = Field(description="The fields it filled.")
    duration_ms: float = Field(description="Time spent on its requests, retries and waits included.")
    reason: Literal["nothing_missing", "no_key", "monthly_limit_reached", "insufficient_query"] | None = Field(
        default=None,
        description="Why it was skipped; `insufficient_query`: it needs what may not be sent (a domain the "
        "account cannot see).",
    )
    error: ProviderError | None = None


class EnrichmentView(BaseModel):
    contact_id: str
    fields: dict[str, FieldValue] = Field(description="The business's enriched fields the account holds.")
    decision_makers: list[DecisionMakerFields]


class EnrichResult(EnrichmentView):
    attempts: list[Attempt] = Field(description="Every provider of the waterfall, asked or not, in order.")
    dry_run: bool = False
    credits_charged: Literal[0] = Field(default=0, description="Enrichment never costs credits.")


class BatchEnrichRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    contact_ids: list[str] = Field(
        min_length=1, max_length=100, description="1-100 contact ids (duplicates collapsed)."
    )
    providers: list[ProviderName] | None = Field(
        default=None, min_length=1, max_length=20, json_schema_extra={"uniqueItems": True}
    )

    @field_validator("providers")
    @classmethod
    def _distinct(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and len(set(value)) != len(value):
            raise ValueError("a provider may appear once")
        return value

    fields: list[FieldName] | None = Field(default=None, min_length=1)
    webhook_url: str | None = Field(
        default=None, max_length=2048, description="Receives `enrichment.completed`, signed with the secret in the 202."
    )


class BatchEnrichAccepted(BaseModel):
    batch_id: str = Field(examples=["ben_3kTz9aQ1xYb2LmN0"])
    status: Literal["processing"]
    total: int
    status_url: str
    webhook_secret: str | None = Field(
        description="Signs the deliveries to `webhook_url` (Standard Webhooks); shown once."
    )


class BatchEnrichItem(BaseModel):
    contact_id: str
    status: Literal["pending", "enriched", "not_found", "unknown_contact", "suppressed", "failed"]
    found: list[str] = Field(default_factory=list, description="Fields this batch filled for the contact.")
    attempts: list[Attempt] = Field(default_factory=list)


class BatchEnrichProgress(BaseModel):
    batch_id: str
    status: Literal["processing", "completed"]
    total: int
    done: int
    created_at: datetime
    completed_at: datetime | None
    items: list[BatchEnrichItem]
