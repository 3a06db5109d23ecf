"""Composing one message: the step's templates rendered for its recipient, with the mailbox's sender,
the postal address and the unsubscribe link no email goes without."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.config import Settings
from vpx.mailboxes.message import OutgoingEmail, new_message_id
from vpx.models import (
    Contact,
    DecisionMaker,
    Enrollment,
    Mailbox,
    SequenceMessage,
    SequenceVersion,
)
from vpx.secrets import SecretBox
from vpx.sequences import templates
from vpx.sequences.sending.steps import message_domain


async def compose(
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
        raise NoUnsubscribeLink  # no email goes without its unsubscribe link
    token = box.open(enrollment.unsubscribe_token_sealed)
    context = await template_context(session, enrollment, mailbox, contact)
    first = enrollment.thread_message_id if message.step > 0 else None
    return OutgoingEmail(
        message_id=message.message_id or new_message_id(message_domain(mailbox.email)),
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


class NoUnsubscribeLink(Exception):
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
