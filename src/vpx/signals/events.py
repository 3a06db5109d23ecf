"""What every source hands the pipeline: one ``SignalEvent`` per observation (D36 and the importers).

An event names its contact either by public id (``contact_id``, ``ct_…``) or by the business it is
about (``business``), which the pipeline matches against the catalogue the way the registry importers
do, creating a contact from what the source gives when nothing matches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

CATEGORIES: tuple[str, ...] = (
    "switching_intent",
    "bant_qualified",
    "funding_ma",
    "topic_surge",
    "permit_filed",
    "tech_install",
)
INTENT_LEVELS: tuple[str, ...] = ("hot", "warm", "cold")
SOURCE_STATUSES: tuple[str, ...] = ("available", "fcra_blocked")


@dataclass(frozen=True, slots=True)
class BusinessRef:
    """The business a signal is about, as the source names it."""

    name: str
    city: str
    state: str
    phone: str | None = None
    website: str | None = None
    address: str | None = None
    postal_code: str | None = None


@dataclass(frozen=True, slots=True)
class SignalEvent:
    """One observation from a source, before classification (D20, D21) and contact linking.

    ``source_record_id`` makes re-ingesting the same record a no-op (unique with ``source``); None
    means the source has no stable id (then every ingest inserts). ``confidence`` None lets the
    pipeline derive it from the evidence.
    """

    category: str
    industry: str
    observed_at: datetime
    evidence: dict[str, Any] = field(default_factory=dict)
    source: str = "evidence"
    source_record_id: str | None = None
    confidence: float | None = None
    topic: str | None = None
    summary: str | None = None
    state: str | None = None
    city: str | None = None
    contact_id: str | None = None
    business: BusinessRef | None = None
