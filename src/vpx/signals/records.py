"""A signal as plain data: what the views (D19) and the ingest hooks read of one, whether it was loaded
from the database (the ``Signal`` model) or has just been written by the pipeline (``NewSignal``).

The pipeline writes its rows in bulk and never needs an ORM object: building one cost ~50 µs, 13 % of
an ingest (docs/benchmarks.md), for objects that were only read by the hooks.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol


class SignalRecord(Protocol):
    """The columns of a signal, read-only."""

    @property
    def id(self) -> str: ...
    @property
    def sequence(self) -> int: ...
    @property
    def category(self) -> str: ...
    @property
    def industry(self) -> str: ...
    @property
    def intent_level(self) -> str: ...
    @property
    def source_status(self) -> str: ...
    @property
    def confidence(self) -> float: ...
    @property
    def topic(self) -> str | None: ...
    @property
    def state(self) -> str: ...
    @property
    def city(self) -> str | None: ...
    @property
    def summary(self) -> str | None: ...
    @property
    def evidence(self) -> dict[str, Any]: ...
    @property
    def contact_id(self) -> int | None: ...
    @property
    def observed_at(self) -> datetime: ...
    @property
    def created_at(self) -> datetime: ...


@dataclass(frozen=True, slots=True)
class NewSignal:
    """A signal the pipeline has just inserted (in ``SIGNAL_COLUMNS`` order)."""

    id: str
    sequence: int
    category: str
    industry: str
    intent_level: str
    source_status: str
    confidence: float
    topic: str | None
    state: str
    city: str | None
    summary: str | None
    evidence: dict[str, Any]
    contact_id: int | None
    source: str
    source_record_id: str | None
    observed_at: datetime
    created_at: datetime
