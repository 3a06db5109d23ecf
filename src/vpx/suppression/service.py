"""Finding a contact on the suppression list, recording refused reveals, adding entries (each new
entry told to the accounts that revealed what it covers: vpx.suppression.notices)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import ColumnElement, and_, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.normalise import email_key, phone_e164
from vpx.errors import InvalidParameters
from vpx.ids import parse_number_id, public_number_id
from vpx.models import Contact, Suppression, SuppressionHit
from vpx.suppression import notices
from vpx.suppression.reasons import ReasonClass, SuppressionReason, reason_class

__all__ = [
    "COVERING_KINDS",
    "ReasonClass",
    "SuppressionKind",
    "SuppressionReason",
    "add_suppression",
    "covering_values",
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
    # DROP's hash of an email or a phone (vpx.compliance.hashing): covers every contact that has it,
    # now or imported later.
    email_hash = "email_hash"
    phone_hash = "phone_hash"
    # The person's own request not to be called: the phone channel only (the phone is flagged, the
    # contact stays on sale), so it covers no contact.
    do_not_call = "do_not_call"


# The kinds that cover contacts (do_not_call flags a phone instead).
COVERING_KINDS = ("contact", "phone", "email", "email_hash", "phone_hash")
_HASH = re.compile(r"^[A-Za-z0-9+/]{43}=$")


def covering_values(contact: Any) -> list[tuple[str, str]]:
    """The (kind, value) pairs of entries that would cover a contact (a row with id, phone, email and,
    when selected, the hashes), as the reveal's check matches them."""
    pairs = [("contact", public_number_id("ct", contact.id))]
    if contact.phone:
        pairs.append(("phone", contact.phone))
    if contact.email:
        pairs.append(("email", contact.email.lower()))
    for kind in ("email_hash", "phone_hash"):
        value = getattr(contact, kind, None)
        if value:
            pairs.append((kind, value))
    return pairs


def _covering_contact(contact: Contact) -> ColumnElement[bool]:
    """The condition on entries that cover the contact, by its id, phone, email or their hashes."""
    pairs = covering_values(contact)
    return or_(*(and_(Suppression.kind == kind, Suppression.value == value) for kind, value in pairs))


async def find_suppression(session: AsyncSession, contact: Contact) -> Suppression | None:
    """The first suppression entry that covers the contact, by its id, phone or email."""
    return await session.scalar(select(Suppression).where(_covering_contact(contact)).order_by(Suppression.id).limit(1))


async def marks_of(session: AsyncSession, contacts: Sequence[Any]) -> dict[int, tuple[ReasonClass, datetime]]:
    """For each of these contacts (rows with ``id``, ``phone`` and ``email``) that an entry covers, the
    first such entry's reason class and when it was made: the mark `GET /contacts/{id}` shows its
    buyers, for a page or a batch of an export at once (one query)."""
    if not contacts:
        return {}
    values: dict[str, set[str]] = {}
    for contact in contacts:
        for kind, value in covering_values(contact):
            values.setdefault(kind, set()).add(value)
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
        found = [first[key] for key in covering_values(contact) if key in first]
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
    if kind in (SuppressionKind.email_hash, SuppressionKind.phone_hash):
        if not _HASH.match(value.strip()):
            raise InvalidParameters.field(kind.value, "is not a SHA-256 hash in Base64 (44 characters)")
        return value.strip()
    if kind in (SuppressionKind.phone, SuppressionKind.do_not_call):
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
    reason: SuppressionReason | ReasonClass | str,
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
    entry = Suppression(kind=kind.value, value=stored, reason=str(reason), note=note, created_at=now)
    session.add(entry)
    await session.flush()
    if kind is SuppressionKind.do_not_call:
        # The phone channel only: the phone is flagged for every buyer (contacts.phone_dnc), the
        # contact stays on sale and nobody's copy is to be deleted.
        await session.execute(
            update(Contact)
            .where(Contact.phone == stored)
            .values(phone_dnc="requested")
            .execution_options(synchronize_session=False)
        )
        return entry, True
    await mark_covered(session, entry)
    await notices.announce_suppression(session, entry, now=now)
    return entry, True


def covered_by(entry: Suppression) -> ColumnElement[bool]:
    """The condition on contacts an entry covers (as the reveal's check matches them); none for an
    entry on the phone channel only."""
    condition = notices.covering(entry)
    return condition if condition is not None else Contact.id == -1


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
