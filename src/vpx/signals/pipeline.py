"""The one ingestion pipeline every source feeds: validate, classify (D20, D21), drop what
was ingested before (source + source_record_id), link or create the contact, number the signals in
commit order, insert them in bulk, raise the contacts' price tier (D9), run the ingest hooks, commit.

Events go in batches of ``BATCH_SIZE``, one transaction each. Each transaction first takes the signal
counter's row lock (PostgreSQL; SQLite's write transaction holds the whole database), so ingests
commit one after another and sequences grow in commit order (D23's resume without gaps).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Collection, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Table, bindparam, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import Clock
from vpx.config import Settings
from vpx.db import Database, UtcDateTime, insert_unless_exists, request_transaction
from vpx.geography import normalise_state
from vpx.ids import new_id, parse_number_id
from vpx.models import Contact, Signal, SignalCounter
from vpx.models.signals import SIGNAL_COUNTER_ID
from vpx.registries import bulk
from vpx.signals import classification, linking
from vpx.signals.events import CATEGORIES, SignalEvent
from vpx.signals.hook_context import HookContext
from vpx.signals.hooks import run_ingest_hooks
from vpx.signals.intake import IngestReport, Prepared, Skipped
from vpx.signals.records import NewSignal, SignalRecord
from vpx.verticals import is_vertical

BATCH_SIZE = 2000
SIGNALS: Table = Signal.__table__  # type: ignore[assignment]
SIGNAL_COLUMNS = (
    "id", "sequence", "category", "industry", "intent_level", "source_status", "confidence", "topic",
    "state", "city", "summary", "evidence", "contact_id", "source", "source_record_id", "observed_at", "created_at",
)  # fmt: skip
EVIDENCE = SIGNAL_COLUMNS.index("evidence")
MAX_TEXT = {"topic": 200, "city": 120, "summary": 2000}


class InvalidEvent(ValueError):
    """An event the pipeline refuses; ``reason`` is a stable snake_case code."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _clip(value: str | None, name: str) -> str | None:
    if value is None:
        return None
    value = " ".join(value.split())
    return value[: MAX_TEXT[name]] or None


def content_id(event: SignalEvent) -> str:
    """A stable id for an event without one: the digest of what it says (re-ingesting the same file
    is then a no-op)."""
    business = None
    if event.business is not None:
        business = [event.business.name, event.business.city, event.business.state, event.business.phone]
    payload = [
        event.category, event.industry, event.observed_at.isoformat(), event.evidence, event.topic,
        event.summary, event.state, event.city, event.contact_id, business,
    ]  # fmt: skip
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
    return f"sha256:{digest[:40]}"


def prepare(index: int, event: SignalEvent) -> Prepared:
    """Validates and classifies one event; ``InvalidEvent`` says why it cannot go in."""
    if event.category not in CATEGORIES:
        raise InvalidEvent("invalid_event", f"category {event.category!r} is not one of {', '.join(CATEGORIES)}")
    if not is_vertical(event.industry):
        raise InvalidEvent("invalid_event", f"industry {event.industry!r} is not one of the 46 verticals")
    if event.observed_at.tzinfo is None:
        raise InvalidEvent("invalid_event", "observed_at needs a time zone")
    if not isinstance(event.evidence, dict):
        raise InvalidEvent("invalid_event", "evidence must be an object")
    if event.confidence is not None and not (
        isinstance(event.confidence, int | float) and math.isfinite(event.confidence) and 0 <= event.confidence <= 1
    ):
        raise InvalidEvent("invalid_event", "confidence must be a number from 0 to 1")
    if event.contact_id is None and event.business is None:
        raise InvalidEvent("invalid_event", "an event names its contact_id or its business")
    contact_number = None
    if event.contact_id is not None:
        contact_number = parse_number_id("ct", event.contact_id)
        if contact_number is None:
            raise InvalidEvent("invalid_event", f"contact_id {event.contact_id!r} is not a contact id (ct_…)")
    raw_state = event.state or (event.business.state if event.business is not None else None)
    state = normalise_state(raw_state) if raw_state else None
    if raw_state and state is None:
        raise InvalidEvent("invalid_event", f"state {raw_state!r} is not a two-letter US state code")
    if event.business is not None:
        if not event.business.name.strip() or not event.business.city.strip():
            raise InvalidEvent("invalid_event", "business needs a name, a city and a state")
        if normalise_state(event.business.state) is None:
            raise InvalidEvent("invalid_event", f"business state {event.business.state!r} is not a US state code")
    missing = classification.missing_for_category(event.category, event.evidence)
    if missing:
        # D20: bant_qualified needs budget, authority, need and timeline.
        raise InvalidEvent("bant_incomplete", f"bant_qualified needs {', '.join(missing)} in its evidence")
    status = classification.source_status(event.evidence)
    level = classification.intent_level(event.evidence)
    confidence = float(event.confidence) if event.confidence is not None else classification.DEFAULT_CONFIDENCE[level]
    record_id = event.source_record_id if event.source_record_id is not None else content_id(event)
    if len(record_id) > 200 or len(event.source) > 40 or not event.source:
        raise InvalidEvent("invalid_event", "source is 1–40 characters and source_record_id at most 200")
    city = event.city or (event.business.city if event.business is not None else None)
    return Prepared(
        index=index,
        event=event,
        state=state or "",  # filled from the contact when the event names only a contact_id
        city=_clip(city, "city"),
        intent_level=level,
        source_status=status,
        confidence=confidence,
        source_record_id=record_id,
        contact_number=contact_number,
    )


def _chunks(events: Iterable[SignalEvent], size: int) -> Iterator[list[tuple[int, SignalEvent]]]:
    chunk: list[tuple[int, SignalEvent]] = []
    for index, event in enumerate(events):
        chunk.append((index, event))
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


async def ingest_events(
    db: Database,
    events: Iterable[SignalEvent],
    *,
    settings: Settings,
    clock: Clock,
    batch_size: int = BATCH_SIZE,
    batches_before: int = 0,
) -> IngestReport:
    """Ingests events in batches, one transaction each; returns what happened to every event.
    ``batches_before``: batches of the same ingest that earlier calls wrote (a caller that hands
    over one batch a call), so that the table is analysed as for one large ingest."""
    report = IngestReport()
    for batch, chunk in enumerate(_chunks(events, batch_size), start=batches_before + 1):
        await _refresh_statistics(db, batch)
        prepared: list[Prepared] = []
        batch_report = IngestReport()
        for index, event in chunk:
            try:
                prepared.append(prepare(index, event))
            except InvalidEvent as exc:
                batch_report.skip(index, exc.reason, str(exc))
        if prepared:
            async with db.writer_turn(), request_transaction(db.write_sessions) as session:
                await ingest_prepared(session, prepared, batch_report, settings=settings, clock=clock)
        report.add(batch_report)
    report.skipped.sort(key=lambda item: item.index)
    return report


async def _refresh_statistics(db: Database, batch: int) -> None:
    """PostgreSQL plans the duplicate lookup (source and record id) on what it last learnt of the
    signals table. Learnt when the table was nearly empty, that plan reads every signal of the
    source for each lookup, so a large ingest into a young table slowed batch after batch (the tenth
    batch of 2,000 spent 600 ms there instead of 5). As the registry importers do, the table is
    analysed before batches 3, 5, 9, 17… of a large ingest, outside its transactions; small ingests
    never are (autovacuum keeps up with them)."""
    if db.is_sqlite or batch < 3 or (batch - 1) & (batch - 2):
        return
    async with db.write_engine.connect() as connection:
        await connection.execution_options(isolation_level="AUTOCOMMIT")
        await connection.execute(text("ANALYZE signals"))


async def _lock_counter(session: AsyncSession) -> int:
    """The last sequence handed out, with the counter's row locked until commit."""
    postgres = session.get_bind().dialect.name == "postgresql"
    for _ in range(2):
        statement = select(SignalCounter.value).where(SignalCounter.id == SIGNAL_COUNTER_ID)
        value = await session.scalar(statement.with_for_update() if postgres else statement)
        if value is not None:
            return int(value)
        # The row is missing (a wiped database): create it, from the highest sequence in use.
        top = await session.scalar(select(Signal.sequence).order_by(Signal.sequence.desc()).limit(1))
        await session.execute(
            insert_unless_exists(session, SignalCounter).values(id=SIGNAL_COUNTER_ID, value=int(top or 0))
        )
    raise RuntimeError("signal counter row could not be created")


async def _known_records(session: AsyncSession, prepared: list[Prepared]) -> set[tuple[str, str]]:
    by_source: dict[str, list[str]] = {}
    for item in prepared:
        if item.source_record_id is not None:
            by_source.setdefault(item.event.source, []).append(item.source_record_id)
    found: set[tuple[str, str]] = set()
    for source, ids in by_source.items():
        unique = sorted(set(ids))
        for start in range(0, len(unique), 500):
            rows = await session.execute(
                select(Signal.source, Signal.source_record_id).where(
                    Signal.source == source, Signal.source_record_id.in_(unique[start : start + 500])
                )
            )
            found.update((str(s), str(r)) for s, r in rows)
    return found


async def ingest_prepared(
    session: AsyncSession, prepared: list[Prepared], report: IngestReport, *, settings: Settings, clock: Clock
) -> list[NewSignal]:
    """One batch inside the caller's transaction; returns the signals inserted (hooks already run)."""
    now = clock.now()
    last = await _lock_counter(session)
    known = await _known_records(session, prepared)
    fresh: list[Prepared] = []
    seen: set[tuple[str, str]] = set()
    for item in prepared:
        key = (item.event.source, item.source_record_id) if item.source_record_id is not None else None
        if key is not None and (key in known or key in seen):
            report.duplicates += 1
            continue
        if key is not None:
            seen.add(key)
        fresh.append(item)
    fresh, created = await linking.link_contacts(session, fresh, report, now=now)

    # Plain rows and plain records: the rows go to the database in bulk, the records to the hooks.
    signals: list[NewSignal] = []
    rows: list[tuple[Any, ...]] = []
    postgres = session.get_bind().dialect.name == "postgresql"
    for item in fresh:
        last += 1
        event = item.event
        blocked = item.source_status == "fcra_blocked"
        values: tuple[Any, ...] = (
            new_id("sg", 16), last, event.category, event.industry, item.intent_level, item.source_status,
            item.confidence, _clip(event.topic, "topic"), item.state, item.city, _clip(event.summary, "summary"),
            event.evidence, None if blocked else item.contact_number, event.source, item.source_record_id,
            event.observed_at, now,
        )  # fmt: skip
        signals.append(NewSignal(*values))
        if postgres:
            # COPY takes the JSON column as text.
            values = (*values[:EVIDENCE], json.dumps(event.evidence, default=str), *values[EVIDENCE + 1 :])
        rows.append(values)
        if blocked:
            report.fcra_blocked += 1
        report.signal_ids.append(values[0])
    if not signals:
        return []
    await bulk.insert_rows(session, SIGNALS, SIGNAL_COLUMNS, rows)
    await session.execute(update(SignalCounter).where(SignalCounter.id == SIGNAL_COUNTER_ID).values(value=last))
    await raise_contact_levels(session, signals, now=now, created=created)
    report.ingested += len(signals)
    await run_ingest_hooks(
        session, signals, HookContext(settings=settings, clock=clock, dialect=session.get_bind().dialect.name, at=now)
    )
    return signals


# D9's order of levels as SQL, for comparing a contact's level with a new signal's in the database.
_LEVEL_RANK_SQL = "coalesce(CASE c.intent_level WHEN 'hot' THEN 3 WHEN 'warm' THEN 2 WHEN 'cold' THEN 1 END, 0)"
_RAISE_POSTGRES = text(
    "UPDATE contacts AS c SET intent_level = v.level, updated_at = :now "
    "FROM unnest(CAST(:ids AS bigint[]), CAST(:levels AS text[]), CAST(:ranks AS integer[])) AS v(id, level, rank) "
    f"WHERE c.id = v.id AND {_LEVEL_RANK_SQL} < v.rank"
).bindparams(bindparam("now", type_=UtcDateTime()))


async def raise_contact_levels(
    session: AsyncSession, signals: Sequence[SignalRecord], *, now: datetime, created: Collection[int] = ()
) -> None:
    """D9: a contact's ``intent_level`` is the highest level of its available signals. Signals never
    change or go away, so a new signal can only raise it. ``created``: contacts written in this batch
    with their level already set."""
    best: dict[int, str] = {}
    for signal in signals:
        if signal.contact_id is None or signal.source_status != "available" or signal.contact_id in created:
            continue
        level = classification.higher_level(best.get(signal.contact_id), signal.intent_level)
        assert level is not None
        best[signal.contact_id] = level
    if not best:
        return
    if session.get_bind().dialect.name == "postgresql":
        # One statement whatever the batch: the levels travel as arrays.
        ids = sorted(best)
        await session.execute(
            _RAISE_POSTGRES,
            {
                "now": now,
                "ids": ids,
                "levels": [best[i] for i in ids],
                "ranks": [classification.LEVEL_RANK[best[i]] for i in ids],
            },
        )
        return
    for level, lower in (("hot", ("warm", "cold")), ("warm", ("cold",)), ("cold", ())):
        ids = sorted(c for c, found in best.items() if found == level)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            condition: ColumnElement[bool] = Contact.intent_level.is_(None)
            if lower:
                condition = or_(condition, Contact.intent_level.in_(lower))
            await session.execute(
                update(Contact)
                .where(Contact.id.in_(part), condition)
                .values(intent_level=level, updated_at=now)
                .execution_options(synchronize_session=False)
            )


__all__ = ["IngestReport", "InvalidEvent", "Skipped", "ingest_events", "ingest_prepared", "prepare"]
