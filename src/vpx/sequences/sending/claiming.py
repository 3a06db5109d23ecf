"""Claiming what may go now (see vpx.sequences.sending): deferred messages due again and enrollments
due, each mailbox's spacing and rolling daily cap kept, a message row with its Message-ID committed
(``sending``, leased) before any SMTP conversation; task steps opened on the way."""

from __future__ import annotations

import functools
import random
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Executable, Integer, bindparam, func, insert, or_, select, tuple_, union_all, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.accounts.lifecycle import suspended
from vpx.db import Database
from vpx.mailboxes.message import new_message_id
from vpx.models import (
    Enrollment,
    Mailbox,
    Sequence,
    SequenceMessage,
    SequenceVersion,
)
from vpx.sequences.sending.steps import finish, message_domain, open_task

# What one round claims at most (and settles of the sends a crash interrupted).
BATCH = 200
# At most this many of one sequence per round: one busy sequence does not hold up the others.
PER_SEQUENCE = 50
DAY = timedelta(hours=24)


@dataclass
class Claimed:
    """A message row claimed for sending: its enrollment and the mailbox it goes from."""

    message_id: int  # the row
    enrollment_id: str
    mailbox_id: str


async def claim_due(database: Database, *, now: datetime, lease: timedelta) -> list[Claimed]:
    """Claims, in one transaction, what may go now: deferred messages due again and enrollments due
    (``find_due``), within each mailbox's spacing and daily cap. Task steps are opened here (no mail).

    Each claim is a conditional update (still deferred, still due), so that two workers that found
    the same step never both take it: the second finds it taken and leaves it. The mailboxes in play
    are locked together, in one order, before any is counted."""
    async with database.write_sessions() as session, session.begin():
        retries = await _due_retries(session, now)
        dues = await find_due(session, now, limit=BATCH)
        gate = _Gate(session, now=now, lease=lease)
        await gate.load([mailbox for _, mailbox, _, _ in retries] + [due.mailbox_id for due in dues], database)
        claimed = await _claim_retries(session, gate, retries, now=now, lease=lease)
        versions = await _versions(session, dues)
        taking: list[Due] = []
        for due in dues[: BATCH - len(claimed)]:
            steps = versions[(due.sequence_id, due.version)].steps
            if due.step >= len(steps) or steps[due.step]["type"] == "task" or await gate.fits(due.mailbox_id):
                taking.append(due)
            # else: held by its mailbox's cap or spacing; the step waits with it
        if not taking:
            return claimed
        # The message row drives an email step from here: the enrollment waits until it is settled.
        taken = set(
            await session.scalars(
                update(Enrollment)
                .where(
                    Enrollment.id.in_([due.enrollment_id for due in taking]),
                    Enrollment.status == "active",
                    Enrollment.next_due_at <= now,
                )
                .values(next_due_at=None, updated_at=now)
                .returning(Enrollment.id)
                .execution_options(synchronize_session=False)
            )
        )
        messages: list[dict[str, object]] = []
        for due in taking:
            if due.enrollment_id not in taken:
                continue  # another worker took it first
            version = versions[(due.sequence_id, due.version)]
            if due.step >= len(version.steps) or version.steps[due.step]["type"] == "task":
                enrollment = await session.get(Enrollment, due.enrollment_id, populate_existing=True)
                assert enrollment is not None
                if due.step >= len(version.steps):
                    await finish(session, enrollment, now)
                else:
                    await open_task(session, enrollment, due.mailbox_id, version, now)
                continue
            messages.append(
                {
                    "enrollment_id": due.enrollment_id,
                    "account_id": due.account_id,
                    "mailbox_id": due.mailbox_id,
                    "step": due.step,
                    "kind": "email",
                    "message_id": new_message_id(message_domain(gate.email(due.mailbox_id))),
                    "status": "sending",
                    "attempts": 0,
                    "lease_until": now + lease,
                    "created_at": now,
                }
            )
        if messages:
            rows = await session.execute(
                insert(SequenceMessage).returning(
                    SequenceMessage.id, SequenceMessage.enrollment_id, SequenceMessage.mailbox_id
                ),
                messages,
            )
            claimed += [Claimed(*row) for row in rows]
    return claimed


async def _versions(session: AsyncSession, dues: list[Due]) -> dict[tuple[str, int], SequenceVersion]:
    """The sequence versions the due enrollments run on, in one query."""
    wanted = {(due.sequence_id, due.version) for due in dues}
    if not wanted:
        return {}
    found = await session.scalars(
        select(SequenceVersion).where(tuple_(SequenceVersion.sequence_id, SequenceVersion.version).in_(list(wanted)))
    )
    return {(version.sequence_id, version.version): version for version in found}


@dataclass(frozen=True)
class Due:
    """An enrollment whose next step is due, as the claim needs it."""

    enrollment_id: str
    account_id: str
    sequence_id: str
    version: int
    step: int
    mailbox_id: str


_DUE_COLUMNS = (
    Enrollment.id,
    Enrollment.account_id,
    Enrollment.sequence_id,
    Enrollment.version,
    Enrollment.step,
    Enrollment.next_due_at,
)
# Sequences asked in one statement (one limited index range each, joined by UNION ALL).
SEQUENCES_PER_QUERY = 20


@functools.cache
def _due_statement(sequences: int) -> Executable:
    """The due enrollments of ``sequences`` sequences (bound as s0, s1 …), ``each`` at most of each:
    built once per size, so that its compiled form is cached (building the construct costs more than
    running it)."""
    now = bindparam("now", type_=Enrollment.next_due_at.type)
    parts = [
        select(*_DUE_COLUMNS)
        .where(
            Enrollment.sequence_id == bindparam(f"s{n}"), Enrollment.status == "active", Enrollment.next_due_at <= now
        )
        .order_by(Enrollment.next_due_at)
        .limit(bindparam("each", type_=Integer()))
        .subquery()
        for n in range(sequences)
    ]
    return union_all(*(select(*part.c) for part in parts)) if sequences > 1 else select(*parts[0].c)


async def find_due(session: AsyncSession, now: datetime, *, limit: int) -> list[Due]:
    """Up to ``limit`` enrollments due now, from running sequences whose mailbox may send now.

    The look-up starts from those mailboxes and their running sequences and asks each sequence,
    through the (sequence, status, due time) index, whether anything is due: its cost follows the
    number of running sequences of mailboxes that may send, never the number of enrollments, and a
    mailbox held by its cap or spacing (its ``next_send_at`` ahead) or a paused sequence costs nothing
    until it may go again. The sequences come in random order and give at most PER_SEQUENCE each, so
    that no busy sequence starves the others."""
    ready = select(Mailbox.id).where(
        Mailbox.status == "active",
        or_(Mailbox.next_send_at.is_(None), Mailbox.next_send_at <= now),
        ~suspended(Mailbox.account_id),
    )
    due = (
        select(Enrollment.id)
        .where(Enrollment.sequence_id == Sequence.id, Enrollment.status == "active", Enrollment.next_due_at <= now)
        .exists()
    )
    sequences = list(
        (
            await session.execute(
                select(Sequence.id, Sequence.mailbox_id).where(
                    Sequence.mailbox_id.in_(ready), Sequence.status == "active", due
                )
            )
        ).all()
    )
    random.shuffle(sequences)
    mailbox_of = dict(sequences)
    found: list[Due] = []
    for start in range(0, len(sequences), SEQUENCES_PER_QUERY):
        if len(found) >= limit:
            break
        each = min(PER_SEQUENCE, limit - len(found))
        chunk = sequences[start : start + SEQUENCES_PER_QUERY]
        values: dict[str, object] = {"now": now, "each": each}
        values.update({f"s{n}": sequence_id for n, (sequence_id, _) in enumerate(chunk)})
        statement = _due_statement(len(chunk))
        rows = sorted((await session.execute(statement, values)).all(), key=lambda row: row[-1])
        found += [
            Due(enrollment_id, account_id, sequence_id, version, step, mailbox_of[sequence_id])
            for enrollment_id, account_id, sequence_id, version, step, _ in rows
        ]
    return found[:limit]


class _Gate:
    """Each mailbox's spacing and rolling daily cap within one claiming transaction."""

    def __init__(self, session: AsyncSession, *, now: datetime, lease: timedelta) -> None:
        self.session, self.now, self.lease = session, now, lease
        self.mailboxes: dict[str, Mailbox | None] = {}  # None: may send nothing more this round
        self.room: dict[str, int] = {}
        self.emails: dict[str, str] = {}

    async def load(self, mailbox_ids: list[str], database: Database) -> None:
        """Loads the mailboxes (locked on PostgreSQL, in the order of their ids, so that two workers
        never wait on each other crosswise) and counts what each has sent in the window."""
        ids = sorted(set(mailbox_ids))
        if not ids:
            return
        query = select(Mailbox).where(Mailbox.id.in_(ids)).order_by(Mailbox.id)
        if not database.is_sqlite:
            query = query.with_for_update()
        loaded = {mailbox.id: mailbox for mailbox in await self.session.scalars(query)}
        now = self.now
        for mailbox_id in ids:
            mailbox = loaded.get(mailbox_id)
            ready = mailbox is not None and mailbox.status == "active"
            if mailbox is not None and mailbox.next_send_at is not None and mailbox.next_send_at > now:
                ready = False
            self.mailboxes[mailbox_id] = mailbox if ready else None
        counting = [mailbox_id for mailbox_id in ids if self.mailboxes[mailbox_id] is not None]
        used = await _used(self.session, counting, now) if counting else {}
        for mailbox_id in counting:
            mailbox = self.mailboxes[mailbox_id]
            assert mailbox is not None
            self.emails[mailbox_id] = mailbox.email
            self.room[mailbox_id] = mailbox.daily_limit - used.get(mailbox_id, 0)

    def email(self, mailbox_id: str) -> str:
        """The address of a mailbox ``fits`` let send."""
        return self.emails[mailbox_id]

    async def fits(self, mailbox_id: str) -> Mailbox | None:
        """The mailbox (loaded) when it may send one more message now (and that message counted)."""
        now = self.now
        mailbox = self.mailboxes.get(mailbox_id)
        if mailbox is None:
            return None
        if self.room.get(mailbox_id, 0) <= 0:
            # The cap holds: the mailbox leaves the look-up until its oldest send of the window turns
            # 24 hours old (then counted again).
            frees_at = await _cap_frees_at(self.session, mailbox_id, now, self.lease)
            mailbox.next_send_at = max(mailbox.next_send_at or now, frees_at)
            self.mailboxes[mailbox_id] = None
            return None
        self.room[mailbox_id] -= 1
        if mailbox.send_interval_seconds > 0:
            # Spacing: one message per mailbox per round, the next not before interval + jitter.
            spacing = mailbox.send_interval_seconds * (1 + random.uniform(0, 0.2))
            mailbox.next_send_at = now + timedelta(seconds=spacing)
            self.mailboxes[mailbox_id] = None
        return mailbox


Retry = tuple[int, str, str, str]  # message row, mailbox, sequence status, enrollment status


async def _due_retries(session: AsyncSession, now: datetime) -> list[Retry]:
    """Messages a server deferred (4xx) whose next try is due."""
    rows = await session.execute(
        select(SequenceMessage.id, SequenceMessage.mailbox_id, Sequence.status, Enrollment.status)
        .join(Enrollment, Enrollment.id == SequenceMessage.enrollment_id)
        .join(Sequence, Sequence.id == Enrollment.sequence_id)
        .where(
            SequenceMessage.status == "deferred",
            SequenceMessage.next_attempt_at <= now,
            ~suspended(SequenceMessage.account_id),
        )
        .order_by(SequenceMessage.next_attempt_at)
        .limit(BATCH)
    )
    return [(message_id, mailbox_id, sequence, enrollment) for message_id, mailbox_id, sequence, enrollment in rows]


async def _claim_retries(
    session: AsyncSession, gate: _Gate, retries: list[Retry], *, now: datetime, lease: timedelta
) -> list[Claimed]:
    """The due retries whose enrollment still runs, as their mailbox allows; the others stopped."""
    ended = [message_id for message_id, _, _, enrollment in retries if enrollment != "active"]
    if ended:  # their enrollment ended meanwhile
        await session.execute(
            update(SequenceMessage)
            .where(SequenceMessage.id.in_(ended), SequenceMessage.status == "deferred")
            .values(status="stopped", next_attempt_at=None, lease_until=None)
            .execution_options(synchronize_session=False)
        )
    going = [
        message_id
        for message_id, mailbox_id, sequence, enrollment in retries
        if enrollment == "active" and sequence == "active" and await gate.fits(mailbox_id)
    ]
    if not going:
        return []
    rows = await session.execute(
        update(SequenceMessage)
        .where(SequenceMessage.id.in_(going), SequenceMessage.status == "deferred")
        .values(status="sending", lease_until=now + lease)
        .returning(SequenceMessage.id, SequenceMessage.enrollment_id, SequenceMessage.mailbox_id)
        .execution_options(synchronize_session=False)
    )
    return [Claimed(*row) for row in rows]


async def _used(session: AsyncSession, mailbox_ids: list[str], now: datetime) -> dict[str, int]:
    """Each mailbox's sends counted against its cap: sent in the last 24 hours, and those on their way."""
    sent = await session.execute(
        select(SequenceMessage.mailbox_id, func.count())
        .where(SequenceMessage.mailbox_id.in_(mailbox_ids), SequenceMessage.sent_at > now - DAY)
        .group_by(SequenceMessage.mailbox_id)
    )
    on_the_way = await session.execute(
        select(SequenceMessage.mailbox_id, func.count())
        .where(SequenceMessage.status.in_(("sending", "transmitting")), SequenceMessage.mailbox_id.in_(mailbox_ids))
        .group_by(SequenceMessage.mailbox_id)
    )
    used: Counter[str] = Counter()
    for mailbox_id, count in [*sent, *on_the_way]:
        used[mailbox_id] += int(count)
    return used


async def _cap_frees_at(session: AsyncSession, mailbox_id: str, now: datetime, lease: timedelta) -> datetime:
    """When the mailbox's cap may let one more go: its oldest send of the window turns 24 hours old
    (sends still on their way are settled within a lease)."""
    oldest = await session.scalar(
        select(func.min(SequenceMessage.sent_at)).where(
            SequenceMessage.mailbox_id == mailbox_id, SequenceMessage.sent_at > now - DAY
        )
    )
    return oldest + DAY if oldest is not None else now + lease
