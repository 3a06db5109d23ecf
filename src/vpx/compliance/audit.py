"""The audit trail (``compliance_events``): DROP's downloads, decisions and uploads, Do-Not-Call imports,
privacy requests' transitions, opt-outs. Append-only (the table's triggers refuse updates and
deletes) and chained: each entry's hash covers its own facts and the hash of the entry before it, so
an entry changed or removed after the fact breaks every hash after it.

An entry is written in the transaction of what it records (a rollback takes both away). Writers take
one lock until commit on PostgreSQL (SQLite's write transaction holds the database), so the chain is
one line whatever the concurrency. Entries hold ids, kinds, counts and dates, never a person's data:
they outlive the records they speak of (a privacy request is deleted after 24 months, its entries
stay).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.models import ComplianceEvent

GENESIS = "0" * 64
# pg_advisory_xact_lock key of the trail's writers (a number no other lock of the service uses).
AUDIT_LOCK = 7_861_204
VERIFY_BATCH = 5_000


def _canonical(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def entry_hash(previous: str, *, entry_id: int, occurred_at: datetime, kind: str, subject: str, detail: str) -> str:
    """SHA-256 (hex) of the previous hash and this entry's facts, one per line."""
    facts = "\n".join((previous, str(entry_id), occurred_at.isoformat(), kind, subject, detail))
    return hashlib.sha256(facts.encode("utf-8")).hexdigest()


async def record(session: AsyncSession, *, kind: str, subject: str, now: datetime, **detail: Any) -> ComplianceEvent:
    """Appends one entry, chained to the last, in the caller's transaction."""
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": AUDIT_LOCK})
    last = (
        await session.execute(
            select(ComplianceEvent.id, ComplianceEvent.hash).order_by(ComplianceEvent.id.desc()).limit(1)
        )
    ).first()
    previous = last.hash if last is not None else GENESIS
    entry_id = (last.id if last is not None else 0) + 1
    body = json.dumps(detail, sort_keys=True, separators=(",", ":"), default=_canonical)
    at = now.astimezone(UTC)  # kept to the microsecond on both databases, read back as UTC
    event = ComplianceEvent(
        id=entry_id,
        occurred_at=at,
        kind=kind,
        subject=subject,
        detail=body,
        previous_hash=previous,
        hash=entry_hash(previous, entry_id=entry_id, occurred_at=at, kind=kind, subject=subject, detail=body),
    )
    session.add(event)
    await session.flush()
    return event


@dataclass(frozen=True)
class ChainReport:
    entries: int
    ok: bool
    head: str
    first_broken: int | None = None
    problem: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "entries": self.entries,
            "ok": self.ok,
            "head": self.head,
            "first_broken": self.first_broken,
            "problem": self.problem,
        }


async def verify(session: AsyncSession) -> ChainReport:
    """Walks the chain from the first entry: each entry's previous hash is the one before's hash, its
    own hash is what its facts give, and ids run without a gap."""
    previous, expected_id, count, after = GENESIS, 1, 0, 0
    while True:
        rows = list(
            await session.scalars(
                select(ComplianceEvent)
                .where(ComplianceEvent.id > after)
                .order_by(ComplianceEvent.id)
                .limit(VERIFY_BATCH)
            )
        )
        for row in rows:
            problem = None
            if row.id != expected_id:
                problem = f"entry {expected_id} is missing"
            elif row.previous_hash != previous:
                problem = "its link to the entry before does not match"
            elif row.hash != entry_hash(
                previous,
                entry_id=row.id,
                occurred_at=row.occurred_at,
                kind=row.kind,
                subject=row.subject,
                detail=row.detail,
            ):
                problem = "its facts do not give its hash (changed after it was written)"
            if problem is not None:
                return ChainReport(count, False, previous, first_broken=expected_id, problem=problem)
            previous, expected_id, count = row.hash, row.id + 1, count + 1
        if len(rows) < VERIFY_BATCH:
            return ChainReport(count, True, previous)
        after = rows[-1].id


async def count(session: AsyncSession) -> int:
    return int(await session.scalar(select(func.count()).select_from(ComplianceEvent)) or 0)
