"""Evidence events (D36): the operator's JSON objects — one per line of a file, or an array in the
admin API's body — read into ``SignalEvent``s. A bad object is reported (with its line number for a
file) and skipped; the others go in."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vpx.fields import MultiLine, SingleLine, Timestamp
from vpx.signals.events import BusinessRef, SignalEvent
from vpx.signals.schemas import Category
from vpx.validation_messages import error_message

SOURCE = "evidence"
MAX_LINE_BYTES = 256 * 1024


class BusinessIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: SingleLine = Field(min_length=1, max_length=300)
    city: SingleLine = Field(min_length=1, max_length=120)
    state: SingleLine = Field(min_length=2, max_length=2)
    phone: SingleLine | None = Field(default=None, max_length=40)
    website: SingleLine | None = Field(default=None, max_length=300)
    address: SingleLine | None = Field(default=None, max_length=300)
    postal_code: SingleLine | None = Field(default=None, max_length=10)


class EvidenceEventIn(BaseModel):
    """One evidence event (D36). ``contact_id`` or ``business`` names the contact."""

    model_config = ConfigDict(extra="forbid")

    category: Category
    industry: SingleLine = Field(max_length=40, description="One of the 46 verticals.")
    observed_at: Timestamp
    confidence: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    topic: SingleLine | None = Field(default=None, max_length=200)
    summary: MultiLine | None = Field(default=None, max_length=2000)
    contact_id: SingleLine | None = Field(default=None, max_length=40)
    business: BusinessIn | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)
    source_record_id: SingleLine | None = Field(
        default=None, max_length=200, description="Your id for the event; default: a digest of its content."
    )


def event_from(raw: Any) -> SignalEvent:
    """A SignalEvent from one decoded JSON value; ``ValueError`` says what is wrong with it."""
    if not isinstance(raw, dict):
        raise ValueError("an event is a JSON object")
    try:
        parsed = EvidenceEventIn.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "event"
        raise ValueError(f"{where}: {error_message(first)}") from None
    if (parsed.contact_id is None) == (parsed.business is None):
        raise ValueError("give exactly one of contact_id and business")
    business = None
    if parsed.business is not None:
        b = parsed.business
        business = BusinessRef(
            name=b.name, city=b.city, state=b.state, phone=b.phone, website=b.website,
            address=b.address, postal_code=b.postal_code,
        )  # fmt: skip
    return SignalEvent(
        category=parsed.category,
        industry=parsed.industry,
        observed_at=parsed.observed_at,
        evidence=parsed.evidence,
        source=SOURCE,
        source_record_id=parsed.source_record_id,
        confidence=parsed.confidence,
        topic=parsed.topic,
        summary=parsed.summary,
        contact_id=parsed.contact_id,
        business=business,
    )


@dataclass(frozen=True)
class BadLine:
    line: int
    message: str


class JsonLinesReader:
    """Streams a JSON Lines file's events; blank lines are ignored, bad ones collected in ``bad``.
    ``lines[i]`` is the line number of the i-th event yielded."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.bad: list[BadLine] = []
        self.lines: list[int] = []

    def __iter__(self) -> Iterator[SignalEvent]:
        with self.path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                if len(raw) > MAX_LINE_BYTES:
                    self.bad.append(BadLine(number, f"line longer than {MAX_LINE_BYTES} bytes"))
                    continue
                try:
                    value = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                    self.bad.append(BadLine(number, f"not JSON: {exc}"))
                    continue
                try:
                    event = event_from(value)
                except ValueError as exc:
                    self.bad.append(BadLine(number, str(exc)))
                    continue
                self.lines.append(number)
                yield event
