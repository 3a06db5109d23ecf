"""Deleting a person's personal information, and keeping it deleted: shared by DROP's work items and
direct deletion requests.

A contact is erased by an entry of the suppression list for the contact itself, with an erasing
reason (``drop_deletion``, ``deletion_request``): the entry takes it out of search, previews and
reveals and tells its past buyers (``contact.suppressed``, the feed), as every entry does; its
personal fields are emptied (the name becomes a tombstone; street, postal code, phone, email,
website, licence number and identifiers go); its decision-makers go. The contacts table's trigger
(migration 20261203_compliance) empties them again at every later write, so a registry import that
brings the person back writes nothing personal: the person stays deleted. Entries by DROP's hash of
the email or phone screen contacts imported later the same way (the trigger erases a new contact
whose hash a deletion entry holds, and adds the entry for the contact itself).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlalchemy import Exists, String, and_, cast, delete, exists, func, literal, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.ids import public_number_id
from vpx.models import Contact, DecisionMaker, RegistryRecord, Suppression
from vpx.suppression import service as suppression_service
from vpx.suppression.service import SuppressionKind

# What an erased contact's name becomes (the trigger writes the same words).
TOMBSTONE = "Deleted at the person's request"
PERSONAL_FIELDS = (
    "street",
    "postal_code",
    "phone",
    "email",
    "website",
    "website_domain",
    "license_number",
    "identifiers",
    "email_hash",
    "phone_hash",
    "phone_dnc",
)


async def erase_contacts(
    session: AsyncSession, contact_ids: Iterable[int], *, reason: str, note: str, now: datetime
) -> list[int]:
    """Erases each contact (see the module); returns the ids of the entries it added (an entry that
    was there already is not the caller's to lift later)."""
    added: list[int] = []
    ids = sorted(set(contact_ids))
    for contact_id in ids:
        entry, created = await suppression_service.add_suppression(
            session,
            kind=SuppressionKind.contact,
            value=public_number_id("ct", contact_id),
            reason=reason,
            note=note,
            now=now,
        )
        if created:
            added.append(entry.id)
    await empty_personal_fields(session, ids, now=now)
    return added


async def empty_personal_fields(session: AsyncSession, contact_ids: Sequence[int], *, now: datetime) -> None:
    for start in range(0, len(contact_ids), 500):
        part = list(contact_ids[start : start + 500])
        await session.execute(
            update(Contact)
            .where(Contact.id.in_(part))
            .values(
                business_name=TOMBSTONE,
                name_key="",
                suppressed=True,
                updated_at=now,
                **dict.fromkeys(PERSONAL_FIELDS),
            )
            .execution_options(synchronize_session=False)
        )
        await session.execute(delete(DecisionMaker).where(DecisionMaker.contact_id.in_(part)))


def covered_now() -> Exists:
    """Whether an entry covers the statement's contact (correlated to ``contacts``), as the trigger
    computes ``suppressed``."""
    return exists().where(
        or_(
            and_(Suppression.kind == "contact", Suppression.value == literal("ct_") + cast(Contact.id, String)),
            and_(Suppression.kind == "phone", Suppression.value == Contact.phone),
            and_(Suppression.kind == "email", Suppression.value == func.lower(Contact.email)),
            and_(Suppression.kind == "email_hash", Suppression.value == Contact.email_hash),
            and_(Suppression.kind == "phone_hash", Suppression.value == Contact.phone_hash),
        )
    )


async def lift_entries(session: AsyncSession, entry_ids: Sequence[int], *, reasons: frozenset[str]) -> int:
    """Takes these entries off the list (only those whose reason is one of ``reasons``: what the
    caller put there, never an entry someone else made), and puts back on sale the contacts nothing
    else covers. A contact they erased stays empty but leaves the catalogue (deactivated) with its
    registry records marked changed, so the next import of its registry writes it again. Returns
    how many entries went."""
    entries = list(
        await session.scalars(
            select(Suppression).where(Suppression.id.in_(list(entry_ids)), Suppression.reason.in_(reasons))
        )
    )
    if not entries:
        return 0
    affected: set[int] = set()
    erased: set[int] = set()
    for entry in entries:
        condition = suppression_service.covered_by(entry)
        found = set(await session.scalars(select(Contact.id).where(condition)))
        affected |= found
        if entry.kind == "contact":
            erased |= found
    await session.execute(delete(Suppression).where(Suppression.id.in_([e.id for e in entries])))
    ids = sorted(affected)
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        await session.execute(
            update(Contact)
            .where(Contact.id.in_(part))
            .values(suppressed=covered_now())
            .execution_options(synchronize_session=False)
        )
    if erased:
        still = set(
            await session.scalars(
                select(Contact.id).where(Contact.id.in_(sorted(erased)), Contact.suppressed.is_(True))
            )
        )
        back = sorted(erased - still)
        if back:
            await session.execute(
                update(Contact)
                .where(Contact.id.in_(back))
                .values(status="deactivated")
                .execution_options(synchronize_session=False)
            )
            await session.execute(
                update(RegistryRecord)
                .where(RegistryRecord.contact_id.in_(back))
                .values(row_hash="")
                .execution_options(synchronize_session=False)
            )
    return len(entries)
