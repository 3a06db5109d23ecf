"""Sending due steps (the worker's job): no email twice after a crash, none skipped.

A step's message row, with the Message-ID it will carry, is committed before any SMTP conversation
(status ``sending``, leased). Right before the DATA command it is committed ``transmitting``; when
the server answers it becomes ``sent``, ``deferred`` (a 4xx: tried again with backoff, at most five
times over 24 hours) or ``bounced`` (a 5xx). A worker killed at any point leaves a leased row; when
the lease runs out:

- ``sending``: DATA was never sent, so the server cannot have accepted it: sent again, same Message-ID;
- ``transmitting``: in doubt. With IMAP, the mailbox's Sent folder tells whether the server took it
  (found: recorded as sent; not found: sent again); without IMAP it is recorded as sent, unconfirmed
  (never twice; the window is the time between the end of DATA and the server's answer).

Suppression (D15 and the account's unsubscribes) is checked immediately before each send. A
mailbox's ``daily_limit`` is a rolling 24-hour cap across its sequences, its sends at least
``send_interval_seconds`` apart plus up to 20 % jitter; what does not fit waits. A mailbox whose
bounce rate passes 5 % over its last 40 sends pauses its sequences.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Executable, Integer, bindparam, func, insert, or_, select, tuple_, union_all, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.accounts.lifecycle import suspended
from vpx.clock import Clock
from vpx.config import Settings
from vpx.db import Database
from vpx.deliverability import service as deliverability
from vpx.mailboxes import service as mailbox_service
from vpx.mailboxes.imap import ImapError, find_message_id
from vpx.mailboxes.message import OutgoingEmail, build, new_message_id
from vpx.mailboxes.smtp import SmtpError, SmtpSession
from vpx.mailboxes.smtp import send as smtp_send
from vpx.models import (
    Contact,
    DecisionMaker,
    Enrollment,
    Mailbox,
    Sequence,
    SequenceMessage,
    SequenceVersion,
)
from vpx.outbound.resolver import Resolver, system_resolver
from vpx.quality import bounces as quality_bounces
from vpx.secrets import SecretBox
from vpx.sequences import deliverable, events, schedule, service, templates

log = logging.getLogger("vpx.sequences")
# Waits before the 2nd … 5th try of a message a server deferred (4xx): five tries over about 24 hours.
RETRY_DELAYS = (timedelta(minutes=5), timedelta(minutes=30), timedelta(hours=3), timedelta(hours=20))
BOUNCE_WINDOW, BOUNCE_MIN, BOUNCE_RATE = 40, 10, 0.05
BATCH = 200
# At most this many of one sequence per round: one busy sequence does not hold up the others.
PER_SEQUENCE = 50
DAY = timedelta(hours=24)


@dataclass
class Claimed:
    message_id: int  # the row
    enrollment_id: str
    mailbox_id: str


async def run_due_sends(
    database: Database, *, box: SecretBox, settings: Settings, clock: Clock, resolver: Resolver = system_resolver
) -> int:
    """One round: settle interrupted sends, then send what is due and fits the mailboxes' caps.
    Returns the steps handled (emails sent or refused, tasks opened)."""
    await settle_interrupted(database, box=box, settings=settings, clock=clock)
    claimed = await claim_due(database, now=clock.now(), lease=timedelta(seconds=settings.worker_lease_seconds))
    # One connection per mailbox for the round: several messages go over it, one at a time.
    connections: dict[str, SmtpSession] = {}
    try:
        for item in claimed:
            await send_claimed(
                database, item, box=box, settings=settings, clock=clock, resolver=resolver, connections=connections
            )
    finally:
        for connection in connections.values():
            await connection.close()
    return len(claimed)


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
                    await _finish(session, enrollment, now)
                else:
                    await _open_task(session, enrollment, due.mailbox_id, version, now)
                continue
            messages.append(
                {
                    "enrollment_id": due.enrollment_id,
                    "account_id": due.account_id,
                    "mailbox_id": due.mailbox_id,
                    "step": due.step,
                    "kind": "email",
                    "message_id": new_message_id(_domain(gate.email(due.mailbox_id))),
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


async def _version(session: AsyncSession, enrollment: Enrollment) -> SequenceVersion:
    return await service.version_of(session, enrollment.sequence_id, enrollment.version)


def _domain(email: str) -> str:
    return email.rsplit("@", 1)[-1] or "vpx.invalid"


async def _open_task(
    session: AsyncSession, enrollment: Enrollment, mailbox_id: str, version: SequenceVersion, now: datetime
) -> None:
    """A manual task step: recorded for the user to do, and the sequence moves on."""
    session.add(
        SequenceMessage(
            enrollment_id=enrollment.id,
            account_id=enrollment.account_id,
            mailbox_id=mailbox_id,
            step=enrollment.step,
            kind="task",
            status="open",
            attempts=0,
            subject=version.steps[enrollment.step]["note"],
            created_at=now,
        )
    )
    await _advance(session, enrollment, version, now, after=now)


async def _advance(
    session: AsyncSession, enrollment: Enrollment, version: SequenceVersion, now: datetime, *, after: datetime
) -> None:
    enrollment.step += 1
    enrollment.updated_at = now
    if enrollment.step >= len(version.steps):
        await _finish(session, enrollment, now)
        return
    contact_state = await session.scalar(select(Contact.state).where(Contact.id == enrollment.contact_id))
    window = schedule.Window.of(version.send_window)
    enrollment.next_due_at = schedule.due_at(after, version.steps[enrollment.step], window, state=contact_state)


async def _finish(session: AsyncSession, enrollment: Enrollment, now: datetime) -> None:
    enrollment.status, enrollment.next_due_at, enrollment.updated_at = "finished", None, now
    await events.announce(session, enrollment, events.FINISHED, {"steps": enrollment.step}, now)


async def send_claimed(
    database: Database,
    item: Claimed,
    *,
    box: SecretBox,
    settings: Settings,
    clock: Clock,
    resolver: Resolver = system_resolver,
    connections: dict[str, SmtpSession] | None = None,
) -> None:
    """Sends one claimed message: suppression checked first, the row committed ``transmitting`` right
    before DATA, the outcome recorded. ``connections`` keeps one SMTP connection per mailbox across
    calls (the caller closes them); without it the message goes over a connection of its own."""
    now = clock.now()
    async with database.read_sessions() as session:
        message = await session.get(SequenceMessage, item.message_id)
        enrollment = await session.get(Enrollment, item.enrollment_id)
        mailbox = await session.get(Mailbox, item.mailbox_id)
        if message is None or enrollment is None or mailbox is None or message.status != "sending":
            return
        contact = await session.get(Contact, enrollment.contact_id)
        version = await _version(session, enrollment)
        assert contact is not None
        blocked = await service.suppressed(
            session, account_id=enrollment.account_id, contact=contact, email=enrollment.email
        )
        email, (reason, detail) = None, ("suppressed", "suppressed at send time")
        status = None if blocked else await deliverable.email_status(session, contact=contact, email=enrollment.email)
        if deliverable.undeliverable(status):
            blocked, reason, detail = True, "undeliverable", f"the address is {status} at send time"
        if not blocked:
            try:
                email = await _compose(session, message, enrollment, mailbox, contact, version, settings, box)
            except templates.TemplateInvalid as exc:
                # A template that fails for this recipient (or passes its budget with their values)
                # stops this enrollment, never the round.
                reason, detail = "template_failed", str(exc)
            except _NoUnsubscribeLink:
                reason, detail = "invalid_message", "the enrollment has no unsubscribe link"
    if email is None:
        async with database.write_sessions() as session, session.begin():
            await _stop_enrollment(session, item, reason=reason, detail=detail, now=now)
        return
    account = mailbox_service.smtp_account(mailbox, box, settings)

    async def before_data() -> None:
        async with database.write_sessions() as session, session.begin():
            await session.execute(
                update(SequenceMessage)
                .where(SequenceMessage.id == item.message_id)
                .values(status="transmitting", attempts=SequenceMessage.attempts + 1, subject=email.subject)
            )

    try:
        built = build(email, now=now)
        if connections is None:
            outcome = await smtp_send(
                account,
                built,
                sender=mailbox.email,
                recipient=enrollment.email,
                before_data=before_data,
                resolver=resolver,
            )
        else:
            connection = connections.get(mailbox.id)
            if connection is None:
                connection = connections[mailbox.id] = SmtpSession(account, resolver=resolver)
            outcome = await connection.send(
                built, sender=mailbox.email, recipient=enrollment.email, before_data=before_data
            )
    except ValueError as exc:
        # A message that cannot be written (an address the recipient's server could not take): it
        # stops this enrollment, never the round.
        async with database.write_sessions() as session, session.begin():
            await _stop_enrollment(session, item, reason="invalid_message", detail=str(exc), now=clock.now())
        return
    except SmtpError as exc:
        # The mailbox is misconfigured (its credentials refused): it pauses, the message waits for it.
        if connections is not None and (dropped := connections.pop(mailbox.id, None)) is not None:
            await dropped.close()
        async with database.write_sessions() as session, session.begin():
            # The account is shown what went wrong in words of our own; the server's are the message's.
            await _pause_mailbox(session, item.mailbox_id, f"smtp_refused: {exc.said}"[:200], clock.now())
            await session.execute(
                update(SequenceMessage)
                .where(SequenceMessage.id == item.message_id)
                .values(status="deferred", next_attempt_at=clock.now(), lease_until=None, last_reply=exc.reason[:1000])
            )
        return
    async with database.write_sessions() as session, session.begin():
        if outcome.in_doubt:
            # The connection broke after the message went and before the answer: settled like a
            # crash in that window (the Sent folder, when the mailbox has IMAP).
            await session.execute(
                update(SequenceMessage)
                .where(SequenceMessage.id == item.message_id)
                .values(lease_until=clock.now(), last_reply=outcome.reply[:1000])
            )
            return
        await record_outcome(session, item, outcome.status, outcome.code, outcome.reply, clock.now())


async def _compose(
    session: AsyncSession,
    message: SequenceMessage,
    enrollment: Enrollment,
    mailbox: Mailbox,
    contact: Contact,
    version: SequenceVersion,
    settings: Settings,
    box: SecretBox,
) -> OutgoingEmail:
    step = version.steps[message.step]
    if enrollment.unsubscribe_token_sealed is None:
        raise _NoUnsubscribeLink  # no email goes without its unsubscribe link
    token = box.open(enrollment.unsubscribe_token_sealed)
    context = await template_context(session, enrollment, mailbox, contact)
    first = enrollment.thread_message_id if message.step > 0 else None
    return OutgoingEmail(
        message_id=message.message_id or new_message_id(_domain(mailbox.email)),
        from_email=mailbox.email,
        from_name=mailbox.from_name,
        to_email=enrollment.email,
        to_name=enrollment.person_name,
        subject=await templates.render_async(step["subject"], context),
        text=await templates.render_async(step["body"], context),
        postal_address=mailbox.postal_address,
        unsubscribe_url=f"{settings.public_url.rstrip('/')}/u/{token}",
        in_reply_to=first,
    )


class _NoUnsubscribeLink(Exception):
    """An enrollment without its sealed unsubscribe token (none is made so; the migration seals every
    token kept before)."""


async def template_context(
    session: AsyncSession, enrollment: Enrollment, mailbox: Mailbox, contact: Contact
) -> templates.Context:
    person: dict[str, str] = {"name": "", "first_name": "", "last_name": "", "title": ""}
    if enrollment.person_name:
        parts = enrollment.person_name.split()
        title = await session.scalar(
            select(DecisionMaker.title)
            .where(DecisionMaker.contact_id == contact.id, DecisionMaker.name == enrollment.person_name)
            .limit(1)
        )
        person = {
            "name": enrollment.person_name,
            "first_name": parts[0],
            "last_name": parts[-1] if len(parts) > 1 else "",
            "title": title or "",
        }
    business = {name: str(getattr(contact, name, None) or "") for name in templates.VARIABLES["contact"]}
    return templates.Context(
        contact=business,
        decision_maker=person,
        mailbox={"from_name": mailbox.from_name or "", "email": mailbox.email},
    )


async def _stop_enrollment(session: AsyncSession, item: Claimed, *, reason: str, detail: str, now: datetime) -> None:
    await session.execute(
        update(SequenceMessage)
        .where(SequenceMessage.id == item.message_id)
        .values(status="stopped", lease_until=None, last_reply=detail[:1000])
    )
    enrollment = await session.get(Enrollment, item.enrollment_id)
    if enrollment is not None and enrollment.status == "active":
        enrollment.status, enrollment.stop_reason, enrollment.next_due_at = "stopped", reason, None
        enrollment.updated_at = now


async def record_outcome(
    session: AsyncSession, item: Claimed, status: str, code: int | None, reply: str, now: datetime
) -> None:
    """What the server answered: sent (the enrollment moves on), bounced (it ends), deferred (later)."""
    message = await session.get(SequenceMessage, item.message_id, with_for_update=True)
    enrollment = await session.get(Enrollment, item.enrollment_id, with_for_update=True)
    if message is None or enrollment is None or message.status not in ("sending", "transmitting"):
        return
    message.lease_until, message.last_reply = None, f"{code or ''} {reply}".strip()[:1000]
    if status == "accepted":
        await mark_sent(session, message, enrollment, now)
    elif status == "rejected" or message.attempts >= len(RETRY_DELAYS) + 1:
        await mark_bounced(session, message, enrollment, now, diagnostic=message.last_reply)
    else:
        message.status = "deferred"
        message.next_attempt_at = now + RETRY_DELAYS[max(0, min(message.attempts, len(RETRY_DELAYS)) - 1)]


async def mark_sent(session: AsyncSession, message: SequenceMessage, enrollment: Enrollment, now: datetime) -> None:
    message.status, message.sent_at = "sent", now
    if message.step == 0 or enrollment.thread_message_id is None:
        enrollment.thread_message_id = message.message_id
    data = {"step": message.step, "message_id": message.message_id, "sent_at": now, "email": enrollment.email}
    await events.announce(session, enrollment, events.STEP_SENT, data, now)
    # Every send moves the window of the last 40: an early bounce weighs until enough go through.
    await check_bounce_rate(session, message.mailbox_id, now)
    if enrollment.status == "active":
        await _advance(session, enrollment, await _version(session, enrollment), now, after=now)


async def mark_bounced(
    session: AsyncSession, message: SequenceMessage, enrollment: Enrollment, now: datetime, *, diagnostic: str | None
) -> None:
    message.status, message.lease_until = "bounced", None
    if enrollment.status == "active":
        enrollment.status, enrollment.stop_reason, enrollment.next_due_at = "bounced", "bounced", None
        enrollment.updated_at = now
    data = {"step": message.step, "message_id": message.message_id, "email": enrollment.email, "diagnostic": diagnostic}
    await events.announce(session, enrollment, events.BOUNCED, data, now)
    # D34: a hard bounce (the address itself refused for good, not a full mailbox or a spam filter) is
    # recorded for the worker (vpx.quality.bounces): it refunds this account, and marks the contact's
    # email bounced for every account once something besides this account's own mail server agrees.
    if deliverability.is_hard_bounce(diagnostic):
        await quality_bounces.record_hard_bounce(
            session, account_id=enrollment.account_id, contact_id=enrollment.contact_id, email=enrollment.email, at=now
        )
    await check_bounce_rate(session, message.mailbox_id, now)


async def check_bounce_rate(session: AsyncSession, mailbox_id: str, now: datetime) -> None:
    """Past 5 % bounced over the mailbox's last 40 sends (at least 10 of them), it pauses."""
    last = list(
        await session.scalars(
            select(SequenceMessage.status)
            .where(SequenceMessage.mailbox_id == mailbox_id, SequenceMessage.status.in_(("sent", "bounced")))
            .order_by(SequenceMessage.id.desc())
            .limit(BOUNCE_WINDOW)
        )
    )
    bounced = sum(s == "bounced" for s in last)
    if len(last) >= BOUNCE_MIN and bounced / len(last) > BOUNCE_RATE:
        rate = f"bounce_rate: {bounced} of the last {len(last)} sends bounced"
        await _pause_mailbox(session, mailbox_id, rate, now)


async def _pause_mailbox(session: AsyncSession, mailbox_id: str, reason: str, now: datetime) -> None:
    await session.execute(
        update(Mailbox)
        .where(Mailbox.id == mailbox_id, Mailbox.status == "active")
        .values(status="paused", pause_reason=reason, updated_at=now)
    )
    await mailbox_service.pause_sequences_of(session, mailbox_id, reason=f"mailbox paused: {reason}"[:200], now=now)


async def settle_interrupted(database: Database, *, box: SecretBox, settings: Settings, clock: Clock) -> int:
    """Messages whose worker died mid-send (their lease ran out): ``sending`` ones go again;
    ``transmitting`` ones are settled by the Sent folder when the mailbox has IMAP, else taken as sent."""
    now = clock.now()
    async with database.read_sessions() as session:
        stale = list(
            (
                await session.execute(
                    select(SequenceMessage, Mailbox)
                    .join(Mailbox, Mailbox.id == SequenceMessage.mailbox_id)
                    .where(SequenceMessage.status.in_(("sending", "transmitting")), SequenceMessage.lease_until <= now)
                    .limit(BATCH)
                )
            ).all()
        )
    for message, mailbox in stale:
        item = Claimed(message.id, message.enrollment_id, mailbox.id)
        verdict = "again"
        if message.status == "transmitting":
            verdict = "sent"
            account = mailbox_service.imap_account(mailbox, box, settings)
            if account is not None and message.message_id:
                try:
                    found = await asyncio.to_thread(find_message_id, account, message.message_id)
                except ImapError as exc:
                    log.warning("could not settle an interrupted send over IMAP", extra={"reason": exc.reason})
                    continue  # asked again next round
                verdict = "sent" if found else "again"
        async with database.write_sessions() as session, session.begin():
            row = await session.get(SequenceMessage, item.message_id, with_for_update=True)
            if row is None or row.status not in ("sending", "transmitting") or (row.lease_until or now) > now:
                continue
            if verdict == "sent":
                await record_outcome(session, item, "accepted", None, "settled after an interruption", now)
            else:
                row.status, row.next_attempt_at, row.lease_until = "deferred", now, None
    return len(stale)
