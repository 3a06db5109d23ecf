"""Whether a sequence may write to an address: not to one the catalogue knows takes no mail.

An address is undeliverable when its status is ``no_mx`` (its domain takes no mail), ``invalid_syntax``
(it is not a well-formed address) or ``bounced`` (an email to it bounced for good). Such an address is
refused at enrollment (status ``undeliverable``) and, should it become one later, its enrollment stops
at the next send (``stop_reason: undeliverable``). An address not checked yet, or whose look-up failed
(``valid_syntax``, ``unknown``), is written to: only a known answer keeps a message from going.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.deliverability.checks import check_address
from vpx.models import Contact, EmailDomain

UNDELIVERABLE = frozenset({"no_mx", "invalid_syntax", "bounced"})


async def email_status(session: AsyncSession, *, contact: Contact, email: str) -> str | None:
    """The status of the address a sequence writes to: the contact's own email's status when it is
    that address; for another (a decision-maker's, found by enrichment), its syntax and its domain's
    last answer. None when nothing is known of it yet."""
    if contact.email is not None and contact.email.strip().casefold() == email.strip().casefold():
        return contact.email_status
    check = check_address(email)
    if check.domain is None:
        return "invalid_syntax"
    return await session.scalar(select(EmailDomain.status).where(EmailDomain.domain == check.domain))


def undeliverable(status: str | None) -> bool:
    return status in UNDELIVERABLE
