"""A round of sending (the worker's job) and the SMTP conversation of each claimed message:
suppression and deliverability checked right before, the row committed ``transmitting`` right before
DATA, the server's answer recorded; one connection per mailbox for the round."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import update

from vpx.clock import Clock
from vpx.config import Settings
from vpx.db import Database
from vpx.mailboxes import service as mailbox_service
from vpx.mailboxes.message import build
from vpx.mailboxes.smtp import SmtpError, SmtpSession
from vpx.mailboxes.smtp import send as smtp_send
from vpx.models import (
    Contact,
    Enrollment,
    Mailbox,
    SequenceMessage,
)
from vpx.outbound.resolver import Resolver, system_resolver
from vpx.secrets import SecretBox
from vpx.sequences import deliverable, service, templates
from vpx.sequences.sending.claiming import Claimed, claim_due
from vpx.sequences.sending.composing import NoUnsubscribeLink, compose
from vpx.sequences.sending.settling import pause_mailbox, record_outcome, settle_interrupted, stop_enrollment
from vpx.sequences.sending.steps import enrollment_version


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
        version = await enrollment_version(session, enrollment)
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
                email = await compose(session, message, enrollment, mailbox, contact, version, settings, box)
            except templates.TemplateInvalid as exc:
                # A template that fails for this recipient (or passes its budget with their values)
                # stops this enrollment, never the round.
                reason, detail = "template_failed", str(exc)
            except NoUnsubscribeLink:
                reason, detail = "invalid_message", "the enrollment has no unsubscribe link"
    if email is None:
        async with database.write_sessions() as session, session.begin():
            await stop_enrollment(session, item, reason=reason, detail=detail, now=now)
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
            await stop_enrollment(session, item, reason="invalid_message", detail=str(exc), now=clock.now())
        return
    except SmtpError as exc:
        # The mailbox is misconfigured (its credentials refused): it pauses, the message waits for it.
        if connections is not None and (dropped := connections.pop(mailbox.id, None)) is not None:
            await dropped.close()
        async with database.write_sessions() as session, session.begin():
            # The account is shown what went wrong in words of our own; the server's are the message's.
            await pause_mailbox(session, item.mailbox_id, f"smtp_refused: {exc.said}"[:200], clock.now())
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
