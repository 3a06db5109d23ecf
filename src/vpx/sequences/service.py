"""Sequences, their versions and their enrollments (D34).

A sequence's steps and send window are versioned: editing them makes a new version, which new
enrollments follow while running ones finish on theirs. Only contacts the account revealed are
enrolled, never an address the suppression list (D15) or the account's own unsubscribes name, nor
one the catalogue knows takes no mail (vpx.sequences.deliverable).
"""

from __future__ import annotations

import hashlib
import secrets
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, false, func, or_, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.accounts import caps
from vpx.contacts import service as contact_service
from vpx.contacts.normalise import name_key
from vpx.cursors import decode_keyed_cursor, encode_keyed_cursor
from vpx.errors import Conflict, InvalidParameters, NotFound
from vpx.ids import new_id, parse_number_id, public_number_id
from vpx.models import (
    AccountUnsubscribe,
    Contact,
    DecisionMaker,
    EnrichmentValue,
    Enrollment,
    Mailbox,
    Sequence,
    SequenceMessage,
    SequenceVersion,
    Suppression,
)
from vpx.registries.service import ROLE_ORDER
from vpx.secrets import SecretBox
from vpx.sequences import deliverable, links, schedule, templates
from vpx.sequences.schemas import (
    EnrollmentView,
    EnrollResult,
    SendWindow,
    SentMessage,
    SequenceCreate,
    SequenceUpdate,
    SequenceView,
)
from vpx.suppression import service as suppression_service

PAGE = 100
# An account's sequences, at most (as its webhooks are capped); the list's default page holds them all.
MAX_SEQUENCES_PER_ACCOUNT = 100
SEQUENCE_CURSOR = "seq"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


async def check_steps(steps: list[Any]) -> list[dict[str, Any]]:
    """The steps as stored. Their templates are checked off the event loop, within their budget: one
    naming an unknown variable, failing, or passing a limit is a 422 naming the step and why."""
    parts = [
        (f"steps[{index}].{part}", getattr(step, part), part == "subject")
        for index, step in enumerate(steps)
        if step.type == "email"
        for part in ("subject", "body")
    ]
    try:
        await templates.check_async([text for _, text, _ in parts], single_line=[line for _, _, line in parts])
    except templates.TemplateInvalid as exc:
        field = parts[exc.index][0] if exc.index is not None else "steps"
        raise InvalidParameters.field(field, str(exc)) from None
    return [step.model_dump(mode="json", exclude_none=True) for step in steps]


async def _mailbox(session: AsyncSession, account_id: str, mailbox_id: str) -> Mailbox:
    mailbox = await session.get(Mailbox, mailbox_id) if len(mailbox_id) <= 32 else None
    if mailbox is None or mailbox.account_id != account_id:
        raise InvalidParameters.field("mailbox_id", f"no mailbox {mailbox_id} in this account")
    if not mailbox.postal_address.strip():
        # Every commercial email carries the sender's postal address (CAN-SPAM): no sequence runs without.
        raise InvalidParameters.field(
            "mailbox_id", f"mailbox {mailbox_id} has no postal address: set one, every email must carry it"
        )
    return mailbox


async def create_sequence(session: AsyncSession, *, account_id: str, body: SequenceCreate, now: datetime) -> Sequence:
    """A new sequence; a 409 once the account has MAX_SEQUENCES_PER_ACCOUNT."""
    await _mailbox(session, account_id, body.mailbox_id)
    await caps.count_in_turn(session, account_id)  # two creations at once count one after the other
    count = await session.scalar(select(func.count()).select_from(Sequence).where(Sequence.account_id == account_id))
    if (count or 0) >= MAX_SEQUENCES_PER_ACCOUNT:
        raise Conflict(
            f"An account may have at most {MAX_SEQUENCES_PER_ACCOUNT} sequences; delete one first "
            "(a paused one still counts)."
        )
    steps = await check_steps(body.steps)
    sequence = Sequence(
        id=new_id("seq"),
        account_id=account_id,
        name=body.name,
        mailbox_id=body.mailbox_id,
        status="active",
        version=1,
        created_at=now,
        updated_at=now,
    )
    session.add(sequence)
    await session.flush()
    session.add(
        SequenceVersion(
            sequence_id=sequence.id, version=1, steps=steps, send_window=_window(body.send_window), created_at=now
        )
    )
    await session.flush()
    return sequence


def _window(window: SendWindow | None) -> dict[str, Any] | None:
    return window.model_dump(mode="json") if window is not None else None


async def get_sequence(session: AsyncSession, *, account_id: str, sequence_id: str, lock: bool = False) -> Sequence:
    sequence = await session.get(Sequence, sequence_id, with_for_update=lock) if len(sequence_id) <= 32 else None
    if sequence is None or sequence.account_id != account_id:
        raise NotFound(f"No sequence {sequence_id}.")
    return sequence


async def version_of(session: AsyncSession, sequence_id: str, version: int) -> SequenceVersion:
    found = await session.scalar(
        select(SequenceVersion).where(SequenceVersion.sequence_id == sequence_id, SequenceVersion.version == version)
    )
    assert found is not None
    return found


async def update_sequence(
    session: AsyncSession, sequence: Sequence, body: SequenceUpdate, *, now: datetime
) -> Sequence:
    given = body.model_fields_set
    if body.name is not None:
        sequence.name = body.name
    if body.mailbox_id is not None:
        await _mailbox(session, sequence.account_id, body.mailbox_id)
        sequence.mailbox_id = body.mailbox_id
    if body.steps is not None or "send_window" in given:
        current = await version_of(session, sequence.id, sequence.version)
        steps = await check_steps(body.steps) if body.steps is not None else current.steps
        window = _window(body.send_window) if "send_window" in given else current.send_window
        sequence.version += 1
        session.add(
            SequenceVersion(
                sequence_id=sequence.id, version=sequence.version, steps=steps, send_window=window, created_at=now
            )
        )
    sequence.updated_at = now
    await session.flush()
    return sequence


async def set_status(session: AsyncSession, sequence: Sequence, *, status: str, now: datetime) -> Sequence:
    """Pauses or resumes. A paused sequence sends nothing and its enrollments' due times stay as they
    were: on resume what is due goes at once (within the mailbox's caps). Resuming needs the
    mailbox's postal address, as creating did."""
    if status == "active":
        await _mailbox(session, sequence.account_id, sequence.mailbox_id)
    sequence.status = status
    sequence.pause_reason = "by_user" if status == "paused" else None
    sequence.updated_at = now
    await session.flush()
    return sequence


async def delete_sequence(session: AsyncSession, sequence: Sequence, *, now: datetime) -> None:
    """Deletes the sequence with its versions, enrollments and their messages (a message on its way
    finishes; nothing more is sent). The unsubscribe links of its emails keep working for 31 days
    (vpx.sequences.links)."""
    await links.retire(session, Sequence.id == sequence.id, now=now)
    await session.delete(sequence)
    await session.flush()


async def sequence_view(session: AsyncSession, sequence: Sequence) -> SequenceView:
    [view] = await sequence_views(session, [sequence])
    return view


async def sequence_views(session: AsyncSession, sequences: list[Sequence]) -> list[SequenceView]:
    """The sequences as shown, their current versions and enrollment counts read in one query each."""
    if not sequences:
        return []
    versions = {
        (v.sequence_id, v.version): v
        for v in await session.scalars(
            select(SequenceVersion).where(
                tuple_(SequenceVersion.sequence_id, SequenceVersion.version).in_([(s.id, s.version) for s in sequences])
            )
        )
    }
    counted: dict[str, dict[str, int]] = defaultdict(dict)
    rows = await session.execute(
        select(Enrollment.sequence_id, Enrollment.status, func.count())
        .where(Enrollment.sequence_id.in_([s.id for s in sequences]))
        .group_by(Enrollment.sequence_id, Enrollment.status)
    )
    for sequence_id, status, n in rows:
        counted[sequence_id][status] = int(n)
    return [_view(sequence, versions[(sequence.id, sequence.version)], counted[sequence.id]) for sequence in sequences]


def _view(sequence: Sequence, version: SequenceVersion, counts: dict[str, int]) -> SequenceView:
    if sequence.status == "paused" and "active" in counts:
        counts["paused"] = counts.pop("active")
    return SequenceView(
        id=sequence.id,
        name=sequence.name,
        mailbox_id=sequence.mailbox_id,
        status="paused" if sequence.status == "paused" else "active",
        pause_reason=sequence.pause_reason,
        version=sequence.version,
        steps=version.steps,
        send_window=SendWindow.model_validate(version.send_window) if version.send_window else None,
        enrollments=counts,
        created_at=sequence.created_at,
        updated_at=sequence.updated_at,
    )


async def page_sequences(
    session: AsyncSession, *, account_id: str, limit: int, cursor: str | None
) -> tuple[list[Sequence], str | None]:
    """A page of the account's sequences, oldest first (ties by id), and the next page's cursor or None."""
    statement = (
        select(Sequence)
        .where(Sequence.account_id == account_id)
        .order_by(Sequence.created_at, Sequence.id)
        .limit(limit + 1)
    )
    if cursor is not None:
        micros, last_id = decode_keyed_cursor(cursor, SEQUENCE_CURSOR)
        at = EPOCH + timedelta(microseconds=micros)
        statement = statement.where(
            or_(Sequence.created_at > at, and_(Sequence.created_at == at, Sequence.id > last_id))
        )
    rows = list(await session.scalars(statement))
    if len(rows) <= limit:
        return rows, None
    last = rows[limit - 1]
    return rows[:limit], encode_keyed_cursor(
        SEQUENCE_CURSOR, (last.created_at - EPOCH) // timedelta(microseconds=1), last.id
    )


# --- Enrollments ---


async def unsubscribed(session: AsyncSession, account_id: str, email: str) -> bool:
    found = await session.scalar(
        select(AccountUnsubscribe.email).where(
            AccountUnsubscribe.account_id == account_id, AccountUnsubscribe.email == email.lower()
        )
    )
    return found is not None


async def suppressed(session: AsyncSession, *, account_id: str, contact: Contact, email: str) -> bool:
    """The global list (D15) by contact, phone or email, the recipient's own address, or the account's
    unsubscribes."""
    if await suppression_service.find_suppression(session, contact) is not None:
        return True
    listed = await session.scalar(
        select(Suppression.id).where(Suppression.kind == "email", Suppression.value == email.lower())
    )
    return listed is not None or await unsubscribed(session, account_id, email)


async def _recipient(
    session: AsyncSession, *, account_id: str, contact: Contact, decision_maker: bool
) -> tuple[str, str, str | None] | None:
    """(email, person key, person name) to write to, or None when the account knows no address."""
    held = await session.execute(
        select(EnrichmentValue.person_key, EnrichmentValue.value).where(
            EnrichmentValue.account_id == account_id,
            EnrichmentValue.contact_id == contact.id,
            EnrichmentValue.field == "email",
        )
    )
    emails = {person: value for person, value in held}
    if not decision_maker:
        email = contact.email or emails.get("")
        return (email.lower(), "", None) if email else None
    people = list(await session.scalars(select(DecisionMaker).where(DecisionMaker.contact_id == contact.id)))
    people.sort(key=lambda p: (ROLE_ORDER.get(p.role, 9), p.name, p.id))
    for person in people:
        email = emails.get(name_key(person.name))
        if email:
            return email.lower(), name_key(person.name), person.name
    return None


async def enroll(
    session: AsyncSession,
    sequence: Sequence,
    *,
    contact_ids: list[str],
    decision_maker: bool,
    box: SecretBox,
    now: datetime,
) -> list[EnrollResult]:
    version = await version_of(session, sequence.id, sequence.version)
    window = schedule.Window.of(version.send_window)
    results: list[EnrollResult] = []
    for public_id in contact_ids:
        number = parse_number_id("ct", public_id)
        contact = await session.get(Contact, number) if number is not None else None
        if contact is None or contact.status != "active":
            results.append(EnrollResult(contact_id=public_id, status="not_found"))
            continue
        revealed = await contact_service.find_reveal(session, account_id=sequence.account_id, contact_id=contact.id)
        if revealed is None:
            results.append(EnrollResult(contact_id=public_id, status="not_revealed"))
            continue
        recipient = await _recipient(
            session, account_id=sequence.account_id, contact=contact, decision_maker=decision_maker
        )
        if recipient is None:
            results.append(EnrollResult(contact_id=public_id, status="no_email"))
            continue
        email, person_key, person_name = recipient
        if await suppressed(session, account_id=sequence.account_id, contact=contact, email=email):
            results.append(EnrollResult(contact_id=public_id, status="suppressed"))
            continue
        status = await deliverable.email_status(session, contact=contact, email=email)
        if deliverable.undeliverable(status):
            results.append(EnrollResult(contact_id=public_id, status="undeliverable", email_status=status))
            continue
        existing = await session.scalar(
            select(Enrollment.id).where(
                Enrollment.sequence_id == sequence.id,
                Enrollment.contact_id == contact.id,
                Enrollment.person_key == person_key,
            )
        )
        if existing is not None:
            results.append(
                EnrollResult(
                    contact_id=public_id, status="already_enrolled", enrollment_id=existing, email_status=status
                )
            )
            continue
        enrollment = Enrollment(
            id=new_id("enr"),
            account_id=sequence.account_id,
            sequence_id=sequence.id,
            version=sequence.version,
            contact_id=contact.id,
            person_key=person_key,
            person_name=person_name,
            email=email,
            status="active",
            step=0,
            next_due_at=schedule.due_at(now, version.steps[0], window, state=contact.state),
            **unsubscribe_token(box),
            created_at=now,
            updated_at=now,
        )
        session.add(enrollment)
        await session.flush()
        results.append(
            EnrollResult(contact_id=public_id, status="enrolled", enrollment_id=enrollment.id, email_status=status)
        )
    return results


def unsubscribe_token(box: SecretBox) -> dict[str, str]:
    """A new enrollment's unsubscribe token, as stored: its digest (what a link is looked up by, as
    reset tokens are) and the token sealed (for the links of its emails); never the token in clear."""
    token = secrets.token_urlsafe(32)
    return {"unsubscribe_digest": token_digest(token), "unsubscribe_token_sealed": box.seal(token)}


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def list_enrollments(
    session: AsyncSession, sequence: Sequence, *, status: str | None, cursor: str | None, limit: int = PAGE
) -> tuple[list[EnrollmentView], str | None]:
    query = select(Enrollment).where(Enrollment.sequence_id == sequence.id)
    if status == "paused":
        query = query.where(Enrollment.status == "active") if sequence.status == "paused" else query.where(false())
    elif status == "active":
        query = query.where(Enrollment.status == "active") if sequence.status == "active" else query.where(false())
    elif status is not None:
        query = query.where(Enrollment.status == status)
    if cursor is not None:
        if not cursor.startswith("enr_") or len(cursor) > 32:
            raise InvalidParameters.field("cursor", "not a cursor this service issued")
        query = query.where(Enrollment.id > cursor)
    rows = list(await session.scalars(query.order_by(Enrollment.id).limit(limit + 1)))
    page = rows[:limit]
    sent: dict[str, list[SentMessage]] = defaultdict(list)
    if page:
        found = await session.execute(
            select(
                SequenceMessage.enrollment_id, SequenceMessage.message_id, SequenceMessage.step, SequenceMessage.sent_at
            )
            .where(SequenceMessage.enrollment_id.in_([e.id for e in page]), SequenceMessage.status == "sent")
            .order_by(SequenceMessage.enrollment_id, SequenceMessage.step)
        )
        for enrollment_id, message_id, step, sent_at in found:
            if message_id and sent_at:
                sent[enrollment_id].append(SentMessage(message_id=message_id, step=step, sent_at=sent_at))
    views = [_enrollment_view(e, sequence, sent[e.id]) for e in page]
    return views, (page[-1].id if len(rows) > limit else None)


def _enrollment_view(enrollment: Enrollment, sequence: Sequence, sent: list[SentMessage]) -> EnrollmentView:
    status = enrollment.status
    if status == "active" and sequence.status == "paused":
        status = "paused"
    return EnrollmentView(
        id=enrollment.id,
        sequence_id=enrollment.sequence_id,
        contact_id=public_number_id("ct", enrollment.contact_id),
        email=enrollment.email,
        decision_maker=enrollment.person_name,
        status=status,
        stop_reason=enrollment.stop_reason,
        step=enrollment.step,
        next_due_at=enrollment.next_due_at if enrollment.status == "active" else None,
        messages=sent,
    )


async def get_enrollment(session: AsyncSession, *, account_id: str, enrollment_id: str) -> Enrollment:
    found = await session.get(Enrollment, enrollment_id) if len(enrollment_id) <= 32 else None
    if found is None or found.account_id != account_id:
        raise NotFound(f"No enrollment {enrollment_id}.")
    return found


async def stop_enrollment(
    session: AsyncSession, enrollment: Enrollment, *, reason: str, status: str, now: datetime
) -> bool:
    """Ends a running enrollment; False when it had ended already."""
    result = await session.execute(
        update(Enrollment)
        .where(Enrollment.id == enrollment.id, Enrollment.status == "active")
        .values(status=status, stop_reason=reason, next_due_at=None, updated_at=now)
    )
    if not getattr(result, "rowcount", 0):
        return False
    # A message waiting to be retried after a 4xx is not sent either (one being transmitted finishes).
    await session.execute(
        update(SequenceMessage)
        .where(SequenceMessage.enrollment_id == enrollment.id, SequenceMessage.status == "deferred")
        .values(status="stopped", next_attempt_at=None)
    )
    return True


def counts(results: list[EnrollResult]) -> dict[str, int]:
    return dict(Counter(r.status for r in results))
