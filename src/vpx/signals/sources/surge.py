"""`topic_surge` signals, computed rather than ingested, in the spirit of Bombora's Company Surge: a
business researching a topic well above its own baseline *and* above its peers' is showing intent.

Research activity arrives as events (JSON Lines now; identified website visits later, D33), counted
per business (contact), topic and UTC day in ``topic_activity``. Scoring a day ``at``:

- *this week* = the business's events on the topic in the 7 days ending with ``at``;
- *baseline* = its weekly average over the 8 weeks before that;
- *own ratio* = (this week + 1) / (baseline + 1) (the +1 keeps tiny counts from looking like surges);
- *peer ratio* = the same ratio over every other business of its vertical active on the topic
  (1 without peers): a whole vertical reading more about a topic (a new regulation, the season) is not
  one business's intent;
- *relative* = own ratio / max(peer ratio, 1); *score* = 100 × (1 − 1 / relative) when relative > 1,
  else 0 (twice the usual reading scores 50, three times 67, ten times 90);
- a signal when the score reaches the threshold (default 60) and this week has at least 5 events.

Each signal is cold (D20: an interest indicator only), with the score as its confidence, and is
emitted once per business, topic and week-ending day (re-scoring the same day inserts nothing).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError
from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.db import Database
from vpx.fields import SingleLine, Timestamp, TrimmedModel
from vpx.ids import parse_number_id
from vpx.models import Contact, TopicActivity
from vpx.signals.events import SignalEvent

SOURCE = "topic_surge"
WEEK_DAYS = 7
BASELINE_WEEKS = 8
MIN_EVENTS = 5
DEFAULT_THRESHOLD = 60


class ActivityIn(TrimmedModel):
    """One research-activity event: a business (its contact id) read about a topic."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    contact_id: str = Field(max_length=40)
    topic: SingleLine = Field(min_length=1, max_length=200)
    observed_at: Timestamp
    count: int = Field(default=1, ge=1, le=1_000_000)


@dataclass
class ActivitySkip:
    line: int
    reason: str
    message: str


def read_activity(path: Path, skipped: list[ActivitySkip]) -> Iterator[tuple[int, ActivityIn]]:
    import json

    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                yield number, ActivityIn.model_validate(json.loads(raw))
            except (ValueError, ValidationError) as exc:
                skipped.append(ActivitySkip(number, "invalid_event", str(exc).splitlines()[0][:300]))


async def record_activity(
    database: Database, events: Iterable[tuple[int, ActivityIn]], skipped: list[ActivitySkip], *, now: datetime
) -> int:
    """Adds the events to the daily counts; returns how many were recorded."""
    totals: dict[tuple[int, str, date], int] = defaultdict(int)
    lines: dict[int, list[int]] = defaultdict(list)
    for line, item in events:
        number = parse_number_id("ct", item.contact_id)
        if number is None:
            skipped.append(ActivitySkip(line, "invalid_event", f"{item.contact_id!r} is not a contact id"))
            continue
        totals[(number, item.topic.lower(), item.observed_at.astimezone(UTC).date())] += item.count
        lines[number].append(line)
    if not totals:
        return 0
    recorded = 0
    async with database.writer_turn(), database.write_sessions() as session, session.begin():
        ids = sorted({key[0] for key in totals})
        known: set[int] = set()
        for start in range(0, len(ids), 500):
            rows = await session.scalars(
                select(Contact.id).where(Contact.id.in_(ids[start : start + 500]), Contact.status == "active")
            )
            known.update(int(r) for r in rows)
        for missing in sorted(set(ids) - known):
            skipped += [ActivitySkip(line, "unknown_contact", f"no contact ct_{missing}") for line in lines[missing]]
        rows_in = [
            {"contact_id": c, "topic": t, "day": d, "events": n}
            for (c, t, d), n in sorted(totals.items())
            if c in known
        ]
        for start in range(0, len(rows_in), 1000):
            await _add_counts(session, rows_in[start : start + 1000], now)
        recorded = sum(len(lines[c]) for c in known)
    return recorded


async def add_activity(session: AsyncSession, *, contact_id: int, topic: str, at: datetime, now: datetime) -> None:
    """One research event of a business on a topic (an identified website visit, D33), in the
    caller's transaction: counted as the JSON Lines events are."""
    day = at.astimezone(UTC).date()
    await _add_counts(session, [{"contact_id": contact_id, "topic": topic.lower(), "day": day, "events": 1}], now)


async def _add_counts(session: AsyncSession, rows: list[dict[str, Any]], now: datetime) -> None:
    insert = postgresql.insert if session.get_bind().dialect.name == "postgresql" else sqlite.insert
    statement = insert(TopicActivity).values([{**row, "updated_at": now} for row in rows])
    statement = statement.on_conflict_do_update(
        index_elements=["contact_id", "topic", "day"],
        set_={"events": TopicActivity.events + statement.excluded.events, "updated_at": now},
    )
    await session.execute(statement)


@dataclass(frozen=True)
class Surge:
    contact_id: int
    industry: str
    topic: str
    this_week: int
    baseline: float
    own_ratio: float
    peer_ratio: float
    score: int


def surge_score(own_ratio: float, peer_ratio: float) -> int:
    relative = own_ratio / max(peer_ratio, 1.0)
    return 0 if relative <= 1 else round(100 * (1 - 1 / relative))


async def compute_surges(session: AsyncSession, *, at: date) -> list[Surge]:
    """Every business and topic with activity this week, scored (see the module's description)."""
    week_start = at - timedelta(days=WEEK_DAYS - 1)
    base_start = week_start - timedelta(days=WEEK_DAYS * BASELINE_WEEKS)
    rows = await session.execute(
        select(TopicActivity.contact_id, TopicActivity.topic, TopicActivity.day, TopicActivity.events, Contact.industry)
        .join(Contact, Contact.id == TopicActivity.contact_id)
        .where(TopicActivity.day >= base_start, TopicActivity.day <= at, Contact.status == "active")
    )
    week: dict[tuple[int, str], int] = defaultdict(int)
    base: dict[tuple[int, str], int] = defaultdict(int)
    industry_of: dict[int, str] = {}
    for contact_id, topic, day, events, industry in rows:
        key = (int(contact_id), topic)
        industry_of[key[0]] = industry
        if day >= week_start:
            week[key] += int(events)
        else:
            base[key] += int(events)
    # Per vertical and topic: the sums over every business, so each one's peers are the rest.
    group_week: dict[tuple[str, str], int] = defaultdict(int)
    group_base: dict[tuple[str, str], float] = defaultdict(float)
    for key in set(week) | set(base):
        group = (industry_of[key[0]], key[1])
        group_week[group] += week.get(key, 0)
        group_base[group] += base.get(key, 0) / BASELINE_WEEKS
    surges: list[Surge] = []
    for key, this_week in sorted(week.items()):
        contact_id, topic = key
        baseline = base.get(key, 0) / BASELINE_WEEKS
        group = (industry_of[contact_id], topic)
        peers_week = group_week[group] - this_week
        peers_base = group_base[group] - baseline
        own = (this_week + 1) / (baseline + 1)
        peer = (peers_week + 1) / (peers_base + 1) if peers_week or peers_base else 1.0
        surges.append(
            Surge(contact_id, industry_of[contact_id], topic, this_week, baseline, own, peer, surge_score(own, peer))
        )
    return surges


def surge_events(surges: Iterable[Surge], *, at: date, threshold: int) -> list[SignalEvent]:
    observed = datetime.combine(at, time(23, 59, 59), tzinfo=UTC)
    events: list[SignalEvent] = []
    for s in surges:
        if s.score < threshold or s.this_week < MIN_EVENTS:
            continue
        evidence: dict[str, Any] = {
            "interest": s.topic,
            "surge_score": s.score,
            "activity_this_week": s.this_week,
            "weekly_baseline": round(s.baseline, 2),
            "own_ratio": round(s.own_ratio, 2),
            "peer_ratio": round(s.peer_ratio, 2),
        }
        events.append(
            SignalEvent(
                category="topic_surge",
                industry=s.industry,
                observed_at=observed,
                evidence=evidence,
                source=SOURCE,
                source_record_id=f"ct_{s.contact_id}:{s.topic}:{at.isoformat()}",
                confidence=s.score / 100,
                topic=s.topic,
                summary=f"Research on {s.topic!r} at {s.own_ratio:.1f}× its usual level (peers {s.peer_ratio:.1f}×)",
                contact_id=f"ct_{s.contact_id}",
            )
        )
    return events
