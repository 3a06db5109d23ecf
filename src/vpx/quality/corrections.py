"""Telling past buyers that a field they bought changed: ``contact.corrected`` for every account that
revealed the contact, queued in the transaction of the change (D26: the outbox), when a field is
found bad (vpx.quality.rules) or a registry update replaces it (vpx.registries.upsert).

The event names the contact, the fields, the kind of change and why; never who reported a field or
what they wrote. The buyer fetches the contact again to see the new values (free: it revealed it).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import Table, exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.ids import public_number_id
from vpx.models import Contact, Reveal
from vpx.quality.fields import COLUMNS, field_values
from vpx.webhooks import events, outbox

Change = Literal["marked_bad", "replaced"]
# Contacts read per statement (SQLite's bound-parameter limit is far above it).
CHUNK = 500


async def revealers(session: AsyncSession, contact_id: int) -> list[str]:
    """The accounts that revealed the contact, in id order."""
    found = await session.scalars(
        select(Reveal.account_id).where(Reveal.contact_id == contact_id).order_by(Reveal.account_id)
    )
    return list(found)


async def announce(
    session: AsyncSession, *, contact_id: int, fields: Sequence[str], change: Change, reason: str, now: datetime
) -> int:
    """``contact.corrected`` for every account that revealed the contact; how many accounts."""
    accounts = await revealers(session, contact_id)
    data: dict[str, Any] = {
        "contact_id": public_number_id("ct", contact_id),
        "fields": list(fields),
        "change": change,
        "reason": reason,
        "corrected_at": now,
    }
    for account_id in accounts:
        await outbox.enqueue_event(
            session, account_id=account_id, event_type=events.CONTACT_CORRECTED, data=data, now=now
        )
    return len(accounts)


Snapshot = dict[int, dict[str, str | None]]
_contacts: Table = Contact.__table__  # type: ignore[assignment]


def _replaced(old: str | None, new: str | None) -> bool:
    return old is not None and new is not None and old.strip().casefold() != new.strip().casefold()


async def revealed_fields(session: AsyncSession, contact_ids: Sequence[int]) -> Snapshot:
    """The reportable fields of those of the contacts someone revealed, before an update: what
    ``announce_replacements`` compares with. Contacts nobody revealed are not read."""
    found: Snapshot = {}
    ids = sorted(set(contact_ids))
    revealed = exists().where(Reveal.contact_id == Contact.id)
    for start in range(0, len(ids), CHUNK):
        rows = await session.execute(
            select(_contacts.c.id, *(_contacts.c[name] for name in COLUMNS)).where(
                Contact.id.in_(ids[start : start + CHUNK]), revealed
            )
        )
        for row in rows:
            found[row.id] = field_values(row)
    return found


async def announce_replacements(session: AsyncSession, before: Snapshot, *, now: datetime) -> int:
    """``contact.corrected`` (replaced, registry_update) for each contact of ``before`` whose fields
    now differ from what they were: a value changed for another, not a gap filled (nobody bought an
    empty field). How many contacts were announced."""
    if not before:
        return 0
    after = await revealed_fields(session, list(before))
    announced = 0
    for contact_id in sorted(before):
        old, new = before[contact_id], after.get(contact_id)
        if new is None:
            continue
        changed = [name for name, value in old.items() if _replaced(value, new[name])]
        if changed:
            await announce(
                session, contact_id=contact_id, fields=changed, change="replaced", reason="registry_update", now=now
            )
            announced += 1
    return announced
