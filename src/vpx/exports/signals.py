"""signals.csv (D30): the signals a D22 query returns, all pages of it, as CSV.

``fetch_signal_page`` is the D22 page query of ``vpx.signals.service`` (newest first, opaque
cursor), so the export holds exactly what the API's pages hold, fcra_blocked signals reduced (D19).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Literal

from pydantic import ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.config import Settings, get_settings
from vpx.db import Database
from vpx.exports.csvstream import neutralised
from vpx.fields import StateCode, Timestamp, TrimmedModel, Vertical

PAGE_SIZE = 100

Category = Literal["switching_intent", "bant_qualified", "funding_ma", "topic_surge", "permit_filed", "tech_install"]
IntentLevel = Literal["hot", "warm", "cold"]
SourceStatus = Literal["available", "fcra_blocked"]

# D19's signal object, flattened: the contact preview's fields get a contact_ prefix.
COLUMNS = (
    "id",
    "category",
    "industry",
    "intent_level",
    "source_status",
    "confidence",
    "topic",
    "state",
    "city",
    "observed_at",
    "created_at",
    "summary",
    "reveal_cost",
    "contact_id",
    "contact_business_name",
    "contact_city",
    "contact_state",
    "contact_industry",
)
_FREE_TEXT = {"topic", "city", "summary", "contact_business_name", "contact_city"}


class SignalFilters(TrimmedModel):
    """D22's filters, less the paging (an export has every page)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    category: Category | None = None
    industry: Vertical | None = None
    intent_level: IntentLevel | None = None
    state: StateCode | None = None
    source_status: SourceStatus | None = None
    since: Timestamp | None = Field(default=None, description="Only signals created after this time (RFC 3339).")


async def fetch_signal_page(
    session: AsyncSession,
    *,
    filters: SignalFilters,
    limit: int,
    cursor: str | None,
    settings: Settings | None = None,
) -> tuple[list[dict[str, Any]], str | None]:
    """One page of the D22 query as JSON-ready signal objects (D19, fcra_blocked ones reduced), and
    the next page's cursor (None at the end)."""
    from vpx.signals import service as signal_service

    page = await signal_service.query_signals(
        session,
        signal_filter=signal_service.SignalFilter.of(filters.model_dump()),
        limit=limit,
        cursor=cursor,
        settings=settings or get_settings(),
    )
    return [view.model_dump(mode="json") for view in page.signals], page.next_cursor


def csv_row(signal: dict[str, Any]) -> list[str]:
    contact = signal.get("contact") or {}
    flat = {**signal, **{f"contact_{k}": v for k, v in contact.items()}}
    row = []
    for name in COLUMNS:
        value = flat.get(name)
        text = "" if value is None else str(value)
        row.append(neutralised(text) if name in _FREE_TEXT else text)
    return row


async def signal_csv_batches(database: Database, filters: SignalFilters) -> AsyncIterator[list[list[str]]]:
    """Every page of the query, one short read at a time."""
    cursor: str | None = None
    while True:
        async with database.read_sessions() as session:
            signals, cursor = await fetch_signal_page(
                session, filters=filters, limit=PAGE_SIZE, cursor=cursor, settings=database.settings
            )
        if signals:
            yield [csv_row(signal) for signal in signals]
        if cursor is None:
            return
