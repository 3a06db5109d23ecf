"""The ingestion pipeline's plain data (``vpx.signals.pipeline``): an event on its way in, and what an
ingest did. The pipeline's parts (``vpx.signals.linking``) read and write them without importing the
pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vpx.signals.events import SignalEvent


@dataclass(frozen=True)
class Skipped:
    index: int
    reason: str
    message: str


@dataclass
class IngestReport:
    """What an ingest did. ``skipped`` holds each refused event's 0-based position and reason."""

    ingested: int = 0
    duplicates: int = 0
    fcra_blocked: int = 0
    contacts_linked: int = 0
    contacts_created: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    signal_ids: list[str] = field(default_factory=list)

    def skip(self, index: int, reason: str, message: str) -> None:
        self.skipped.append(Skipped(index, reason, message))

    @property
    def skipped_reasons(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for item in self.skipped:
            counts[item.reason] = counts.get(item.reason, 0) + 1
        return counts

    def add(self, other: IngestReport) -> None:
        self.ingested += other.ingested
        self.duplicates += other.duplicates
        self.fcra_blocked += other.fcra_blocked
        self.contacts_linked += other.contacts_linked
        self.contacts_created += other.contacts_created
        self.skipped.extend(other.skipped)
        self.signal_ids.extend(other.signal_ids)


@dataclass
class Prepared:
    """A validated, classified event on its way in."""

    index: int
    event: SignalEvent
    state: str
    city: str | None
    intent_level: str
    source_status: str
    confidence: float
    source_record_id: str | None
    contact_number: int | None = None
