"""The signal resources of the API: the D19 object, the D22 page and batch, evidence ingestion (D36)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from vpx.contacts.schemas import ContactPreview, RevealedContact
from vpx.fields import JsonInt, StateCode, Timestamp, TrimmedModel, Vertical
from vpx.money import Credits

Category = Literal["switching_intent", "bant_qualified", "funding_ma", "topic_surge", "permit_filed", "tech_install"]
IntentLevel = Literal["hot", "warm", "cold"]
SourceStatus = Literal["available", "fcra_blocked"]


class SignalView(BaseModel):
    """A signal. An ``fcra_blocked`` signal keeps only id, category, industry, state,
    source_status and timestamps: every other field is null (no contact, no evidence)."""

    id: str = Field(examples=["sg_4Fq9zK2mX7bT1cYw"], description="Signal identifier, `sg_…`.")
    sequence: int = Field(description="Position in commit order; the stream's event id.")
    category: Category
    industry: str = Field(description="One of the 46 verticals.")
    intent_level: IntentLevel | None = Field(
        description="hot: budget, timeline and vendor evaluation in the evidence; warm: a timeline or a named "
        "vendor; cold: an interest only. Null when fcra_blocked."
    )
    source_status: SourceStatus
    confidence: float | None = Field(ge=0, le=1, description="0–1; null when fcra_blocked.")
    topic: str | None
    state: str = Field(description="Two-letter USPS state code.")
    city: str | None
    observed_at: datetime = Field(description="When the source observed it.")
    created_at: datetime = Field(description="When it entered the service (what `since` compares).")
    summary: str | None
    evidence: dict[str, Any] | None = Field(description="The source's evidence attributes; null when fcra_blocked.")
    reveal_cost: Credits | None = Field(description="Credits a purchase costs now; null when fcra_blocked.")
    contact: ContactPreview | None = Field(description="The contact's preview; null when fcra_blocked or unlinked.")


class SignalPage(BaseModel):
    """Newest first; pass ``next_cursor`` as ``cursor`` for the next page (null at the end)."""

    signals: list[SignalView]
    limit: int
    next_cursor: str | None


class SignalQueryParams(TrimmedModel):
    """The query parameters of `GET /signals`. Unknown parameters are a 422, never ignored."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    category: Category | None = None
    industry: Vertical | None = None
    intent_level: IntentLevel | None = None
    state: StateCode | None = None
    source_status: SourceStatus | None = None
    since: Timestamp | None = Field(
        default=None, description="Only signals created after this time (RFC 3339, with a zone)."
    )
    limit: JsonInt = Field(default=25, ge=1, le=100, description="Page size, 1–100.")
    cursor: str | None = Field(default=None, max_length=200, description="`next_cursor` of the previous page.")


class SignalStreamParams(TrimmedModel):
    """The stream's filters (those of `GET /signals`, without paging). Without `source_status`,
    available signals only."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    category: Category | None = None
    industry: Vertical | None = None
    intent_level: IntentLevel | None = None
    state: StateCode | None = None
    source_status: SourceStatus | None = None


def _no_bool(value: object) -> object:
    if isinstance(value, bool):
        raise ValueError("must be a string")
    return value


class SignalBatchQuery(TrimmedModel):
    """One query of a batch: the filters of `GET /signals`."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    category: Category | None = None
    industry: Vertical | None = None
    intent_level: IntentLevel | None = None
    state: Annotated[StateCode, BeforeValidator(_no_bool)] | None = None
    source_status: SourceStatus | None = None
    since: Timestamp | None = None


MAX_BATCH_QUERIES = 25


class SignalBatchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    queries: list[SignalBatchQuery] = Field(min_length=1, max_length=MAX_BATCH_QUERIES, description="1–25 queries.")
    limit_per_query: JsonInt = Field(default=25, ge=1, le=100, description="Signals per query, 1–100.")


class SignalBatchResult(BaseModel):
    query: SignalBatchQuery
    signals: list[SignalView]


class SignalBatchResponse(BaseModel):
    """Results in request order."""

    results: list[SignalBatchResult]


class SkippedEvent(BaseModel):
    index: int = Field(description="0-based position in the request (line number - 1 for files).")
    line: int | None = Field(default=None, description="1-based line number of a JSON Lines file.")
    reason: str = Field(description="Stable snake_case reason, e.g. `invalid_event`, `bant_incomplete`.")
    message: str


class IngestResult(BaseModel):
    """What an ingest of evidence events did."""

    ingested: int
    duplicates: int
    fcra_blocked: int
    contacts_linked: int
    contacts_created: int
    skipped: list[SkippedEvent]
    signal_ids: list[str] = Field(description="Ids of the signals inserted, in input order.")


class SignalPurchase(BaseModel):
    """A purchase: the signal and its contact, revealed at the contact's price."""

    signal: SignalView
    contact: RevealedContact
