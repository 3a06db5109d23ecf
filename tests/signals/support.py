"""Helpers for the signal tests: events and ingestion through the real pipeline."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from fastapi import FastAPI

from vpx.signals.events import BusinessRef, SignalEvent
from vpx.signals.pipeline import IngestReport, ingest_events

OBSERVED = datetime(2026, 11, 14, 9, 30, tzinfo=UTC)


def event(**fields: Any) -> SignalEvent:
    """A switching_intent event about a Denver plumber unless told otherwise."""
    values: dict[str, Any] = {
        "category": "switching_intent",
        "industry": "home-services",
        "observed_at": OBSERVED,
        "evidence": {"interest": "crm"},
        "business": BusinessRef(name="Acme Plumbing LLC", city="Denver", state="CO", phone="+13035550100"),
    }
    values.update(fields)
    return SignalEvent(**values)


async def ingest(app: FastAPI, events: Iterable[SignalEvent], **kwargs: Any) -> IngestReport:
    return await ingest_events(app.state.database, events, settings=app.state.settings, clock=app.state.clock, **kwargs)
