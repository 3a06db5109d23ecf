"""The demo's month of intent signals: evidence events (D36) about demo businesses handed to the one
ingestion pipeline, exactly as `vpx signals ingest` hands a file's lines to it — classified (D20,
D21), linked, priced (D9), announced to streams, webhooks and auto-buy.

The events are spread over the 30 days before ``now`` and entered day by day, each day's with that
day's time as its ``created_at``, as if the service had been collecting for a month: ``since`` and
the other filters have something to tell apart. Record ids are stable (``demo:<n>``), so loading the
demo again inserts nothing new.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.db import Database
from vpx.demo.evidence import DECK, FCRA_EVIDENCE, DemoBusiness, evidence_event
from vpx.models import Contact, Signal
from vpx.signals.evidence import SOURCE, event_from
from vpx.signals.pipeline import IngestReport, ingest_events

HISTORY_DAYS = 30
RECORD_PREFIX = "demo:"
# One event in this many carries FCRA-regulated evidence (D21).
FCRA_EVERY = 23
# Businesses an event may be about: enough for variety, few enough to read at once.
MAX_BUSINESSES = 50_000


def default_signal_count(contacts: int) -> int:
    """One signal for every ten demo contacts, at least 200: every category and level several times."""
    return max(200, contacts // 10)


def _business(row: Sequence[Any]) -> DemoBusiness:
    contact_id, name, industry, specialty, state, city = row
    return DemoBusiness(f"ct_{contact_id}", name, industry, specialty, state, city)


_COLUMNS = (Contact.id, Contact.business_name, Contact.industry, Contact.specialty, Contact.state, Contact.city)


async def demo_businesses(session: AsyncSession, *, limit: int = MAX_BUSINESSES) -> list[DemoBusiness]:
    """The demo catalogue's active businesses, in id order."""
    rows = await session.execute(
        select(*_COLUMNS).where(Contact.origin == "demo", Contact.status == "active").order_by(Contact.id).limit(limit)
    )
    return [_business(row) for row in rows]


async def pick_business(
    session: AsyncSession, rng: random.Random, *, industry: str | None = None, states: Sequence[str] = ()
) -> DemoBusiness | None:
    """A demo business drawn at random (of ``industry``, in one of ``states``), None when there is none."""
    conditions: list[ColumnElement[bool]] = [Contact.origin == "demo", Contact.status == "active"]
    if industry is not None:
        conditions.append(Contact.industry == industry)
    if states:
        conditions.append(Contact.state.in_(states))
    low, high = (await session.execute(select(func.min(Contact.id), func.max(Contact.id)).where(*conditions))).one()
    if low is None:
        return None
    start = rng.randint(int(low), int(high))
    statement = select(*_COLUMNS).where(*conditions, Contact.id >= start).order_by(Contact.id).limit(1)
    row = (await session.execute(statement)).first()
    return _business(row) if row is not None else None


def _deck(rng: random.Random) -> list[tuple[str, str]]:
    cards = [(category, level) for category, level, weight in DECK for _ in range(weight)]
    rng.shuffle(cards)
    return cards


def history_events(
    businesses: Sequence[DemoBusiness], *, count: int, now: datetime, seed: int
) -> list[tuple[datetime, dict[str, Any]]]:
    """``count`` evidence events with the time each entered the service, oldest first. Every
    ``len(DECK)``-odd events hold every category at every level; one in ``FCRA_EVERY`` is regulated."""
    rng = random.Random(f"demo-signals:{seed}")
    deck = _deck(rng)
    permits = [b for b in businesses if b.files_permits] or list(businesses)
    events: list[tuple[datetime, dict[str, Any]]] = []
    for number in range(count):
        category, level = deck[number % len(deck)]
        business = rng.choice(permits if category == "permit_filed" else businesses)
        entered_at = now - timedelta(days=rng.randrange(HISTORY_DAYS))
        observed_at = entered_at - timedelta(minutes=rng.randrange(30, 72 * 60))
        fcra = FCRA_EVIDENCE[number // FCRA_EVERY % len(FCRA_EVIDENCE)] if number % FCRA_EVERY == 7 else None
        raw = evidence_event(
            rng, business, category, level, observed_at=observed_at, record_id=f"{RECORD_PREFIX}{number}", fcra=fcra
        )
        events.append((entered_at, raw))
    events.sort(key=lambda item: item[0])
    return events


async def load_demo_signals(
    database: Database, *, count: int, seed: int, now: datetime, settings: Settings
) -> IngestReport:
    """Ingests the demo's month of signals unless they are there already (their record ids are stable);
    returns what the pipeline did."""
    async with database.read_sessions() as session:
        businesses = await demo_businesses(session)
    report = IngestReport()
    if not businesses or count <= 0:
        return report
    by_day: dict[datetime, list[dict[str, Any]]] = defaultdict(list)
    for entered_at, raw in history_events(businesses, count=count, now=now, seed=seed):
        by_day[entered_at].append(raw)
    for entered_at, raws in sorted(by_day.items()):
        # Each day's events enter at that day's time: created_at is when a signal entered (D22's since).
        day = await ingest_events(database, map(event_from, raws), settings=settings, clock=FixedClock(entered_at))
        report.add(day)
    return report


async def demo_signal_count(database: Database) -> int:
    """How many of the demo's signals (its month and its live feed) there are."""
    async with database.read_sessions() as session:
        statement = select(func.count()).where(Signal.source == SOURCE, Signal.source_record_id.like("demo%"))
        return int(await session.scalar(statement.select_from(Signal)) or 0)
