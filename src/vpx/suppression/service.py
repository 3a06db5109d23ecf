"""Finding a contact on the suppression list, recording refused reveals, adding entries (each new
entry told to the accounts that revealed what it covers: vpx.suppression.notices)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import ColumnElement, and_, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.normalise import email_key, phone_e164
from vpx.errors import InvalidParameters
from vpx.ids import parse_number_id, public_number_id
from vpx.models import Contact, Suppression, SuppressionHit
from vpx.suppression import notices
from vpx.suppression.reasons import ReasonClass, SuppressionReason, reason_class

__all__ = [
    "ReasonClass",
    "SuppressionKind",
    "SuppressionReason",
    "add_suppression",
    "find_suppression",
    "marks_of",
    "normalise_value",
    "record_hit",
    "tell_buyers_of",
]


class SuppressionKind(StrEnum):
    contact = "contact"
    phone = "phone"
    email = "email"


def _covering_contact(contact: Contact) -> ColumnElement[bool]:
    """The condition on entries that cover the contact, by its id, phone or email."""
    conditions = [and_(Suppression.kind == "contact", Suppression.value == public_number_id("ct", contact.id))]
    if contact.phone:
        conditions.append(and_(Suppression.kind == "phone", Suppression.value == contact.phone))
    if contact.email:
        conditions.append(and_(Suppression.kind == "email", Suppression.value == contact.email.lower()))
    return or_(*conditions)


async def find_suppression(session: AsyncSession, contact: Contact) -> Suppression | None:
    """The first suppression entry that covers the contact, by its id, phone or email."""
    return await session.scalar(select(Suppression).where(_covering_contact(contact)).order_by(Suppression.id).limit(1))


async def marks_of(session: AsyncSession, contacts: Sequence[Any]) -> dict[int, tuple[ReasonClass, datetime]]:
    """For each of these contacts (rows with ``id``, ``phone`` and ``email``) that an entry covers, the
    first such entry's reason class and when it was made: the mark `GET /contacts/{id}` shows its
    buyers, for a page or a batch of an export at once (one query)."""
    if not contacts:
        return {}
    values = {
        "contact": {public_number_id("ct", c.id) for c in contacts},
        "phone": {c.phone for c in contacts if c.phone},
        "email": {c.email.lower() for c in contacts if c.email},
    }
    covering = or_(*(and_(Suppression.kind == kind, Suppression.value.in_(sorted(found)))
                     for kind, found in values.items() if found))  # fmt: skip
    entries = await session.execute(
        select(Suppression.id, Suppression.kind, Suppression.value, Suppression.reason, Suppression.created_at)
        .where(covering)
        .order_by(Suppression.id)
    )
    first: dict[tuple[str, str], tuple[int, ReasonClass, datetime]] = {}
    for entry_id, kind, value, reason, created_at in entries:
        first.setdefault((kind, value), (entry_id, reason_class(reason), created_at))
    marks: dict[int, tuple[ReasonClass, datetime]] = {}
    for contact in contacts:
        keys = [("contact", public_number_id("ct", contact.id)), ("phone", contact.phone or "")]
        keys.append(("email", contact.email.lower() if contact.email else ""))
        found = [first[key] for key in keys if key in first]
        if found:
            _, reason, since = min(found)  # the entry made first, as find_suppression takes it
            marks[contact.id] = (reason, since)
    return marks


async def tell_buyers_of(session: AsyncSession, contact: Contact, *, now: datetime) -> int:
    """Each entry that covers the contact announced again, after a change that gave the contact
    buyers or entries it did not have (a merge of two contacts): buyers not told yet are, nobody
    twice (vpx.suppression.notices). Returns how many accounts-and-contacts were told."""
    await session.flush()
    entries = select(Suppression).where(_covering_contact(contact)).order_by(Suppression.id)
    told = 0
    for entry in list(await session.scalars(entries)):
        told += await notices.announce_suppression(session, entry, now=now)
    return told


def refusal(public_id: str, reason: str, *, revealed: bool, outcome: str) -> str:
    """The 451's words: the reason's class only to an account that revealed the contact before (it
    was told anyway, through its feed); to anyone else the list's reasons are nobody's business."""
    if revealed:
        return f"Contact {public_id} is on the suppression list ({reason_class(reason)}); {outcome}."
    return f"Contact {public_id} is on the suppression list; {outcome}."


async def record_hit(
    session: AsyncSession, *, account_id: str, contact_id: int, suppression_id: int, now: datetime
) -> None:
    session.add(
        SuppressionHit(account_id=account_id, contact_id=contact_id, suppression_id=suppression_id, created_at=now)
    )
    await session.flush()


def normalise_value(kind: SuppressionKind, value: str) -> str:
    """The stored form of a suppression value; raises InvalidParameters when it is not one."""
    if kind is SuppressionKind.contact:
        if parse_number_id("ct", value.strip()) is None:
            raise InvalidParameters.field("contact", f"{value!r} is not a contact id (ct_…)")
        return value.strip()
    if kind is SuppressionKind.phone:
        phone = phone_e164(value)
        if phone is None:
            raise InvalidParameters.field("phone", f"{value!r} is not a valid phone number")
        return phone
    email = email_key(value)
    if email is None:
        raise InvalidParameters.field("email", f"{value!r} is not an email address")
    return email


async def add_suppression(
    session: AsyncSession,
    *,
    kind: SuppressionKind,
    value: str,
    reason: SuppressionReason | ReasonClass,
    note: str,
    now: datetime,
) -> tuple[Suppression, bool]:
    """Adds an entry; adding one that exists returns it unchanged (and False). A new entry is told,
    in the same transaction, to every account that revealed a contact it covers, and ends every
    running enrollment it covers, in every account."""
    stored = normalise_value(kind, value)
    existing = await session.scalar(
        select(Suppression).where(Suppression.kind == kind.value, Suppression.value == stored)
    )
    if existing is not None:
        return existing, False
    entry = Suppression(kind=kind.value, value=stored, reason=reason.value, note=note, created_at=now)
    session.add(entry)
    await session.flush()
    await mark_covered(session, entry)
    await notices.announce_suppression(session, entry, now=now)
    return entry, True


def covered_by(entry: Suppression) -> ColumnElement[bool]:
    """The condition on contacts an entry covers (as the reveal's check matches them)."""
    if entry.kind == "contact":
        return Contact.id == (parse_number_id("ct", entry.value) or -1)
    if entry.kind == "phone":
        return Contact.phone == entry.value
    return func.lower(Contact.email) == entry.value


async def mark_covered(session: AsyncSession, entry: Suppression) -> None:
    """The contacts the entry covers leave search and previews (``contacts.suppressed``; a trigger
    marks contacts added, or given this phone or email, later). SQL's lower() folds ASCII letters
    only: an email with other capitals is not marked here, though the reveal's own check, which
    folds as entries are stored, still refuses it."""
    await session.execute(
        update(Contact)
        .where(covered_by(entry), Contact.suppressed.is_(False))
        .values(suppressed=True)
        .execution_options(synchronize_session=False)
    )
