"""Contact linking at ingestion: an event's contact is the one it names, else the catalogue's match for
its business — the registry importers' own resolution (``vpx.registries.resolution``: phone, name and
address, fuzzy name in the same city, never across conflicting phones, domains or house numbers) —
else a contact made from what the source gives. Businesses a veto held apart from a nearly
equal name are recorded as possible duplicates (vpx.registries.duplicates).

Everything is done for a whole batch at once: one lookup of the named contacts, one resolution of all
the businesses, one insert of the new contacts.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.contacts.normalise import fast_phone_e164, postal_code, website_key
from vpx.contacts.search import backend_for
from vpx.geography import normalise_state
from vpx.ids import new_id
from vpx.models import Contact
from vpx.registries import duplicates, resolution
from vpx.registries.matching import NAME_THRESHOLD
from vpx.signals import classification

if TYPE_CHECKING:
    from vpx.signals.intake import IngestReport, Prepared


async def link_contacts(
    session: AsyncSession, items: list[Prepared], report: IngestReport, *, now: datetime
) -> tuple[list[Prepared], set[int]]:
    """Sets each available event's contact: its contact_id if it exists, else the catalogue's match
    for its business, else a contact made from what the source gives. Returns the events that can go
    in (an unknown contact_id is skipped) and the ids of the contacts created, which are written with
    their intent level already set (D9)."""
    named = sorted({i.contact_number for i in items if i.contact_number is not None})
    existing: dict[int, tuple[str, str, str]] = {}
    for start in range(0, len(named), 500):
        rows = await session.execute(
            select(Contact.id, Contact.state, Contact.city, Contact.status).where(
                Contact.id.in_(named[start : start + 500])
            )
        )
        existing.update({int(r[0]): (r[1], r[2], r[3]) for r in rows})
    kept: list[Prepared] = []
    by_business: list[Prepared] = []
    for item in items:
        if item.contact_number is not None:
            found = existing.get(item.contact_number)
            if found is None or found[2] != "active":
                report.skip(item.index, "unknown_contact", f"no contact {item.event.contact_id}")
                continue
            item.state = item.state or found[0]
            item.city = item.city or found[1]
            report.contacts_linked += 1
            kept.append(item)
        elif item.source_status == "fcra_blocked":
            kept.append(item)  # D19: an fcra_blocked signal is linked to no contact
        else:
            by_business.append(item)
            kept.append(item)
    created = await _resolve_businesses(session, by_business, report, now=now) if by_business else set()
    return kept, created


def _business_row(item: Prepared, now: datetime) -> dict[str, Any]:
    business = item.event.business
    assert business is not None
    return contact_row(
        {
            "business_name": business.name,
            "city": business.city,
            "state": normalise_state(business.state),
            "industry": item.event.industry,
            "phone": fast_phone_e164(business.phone),
            "website": website_key(business.website),
            "street": " ".join(business.address.split()) if business.address else None,
            "postal_code": postal_code(business.postal_code),
        },
        origin="registry",
        now=now,
    )


async def _resolve_businesses(
    session: AsyncSession, items: list[Prepared], report: IngestReport, *, now: datetime
) -> set[int]:
    rows = [_business_row(item, now) for item in items]
    targets = await resolution.resolve(session, rows, kinds=["business"] * len(rows), threshold=NAME_THRESHOLD)
    creating = [i for i, t in enumerate(targets) if t.contact_id is None and t.pending is None]
    # D9: a new contact starts at the highest level of the batch's signals about it (its own and those
    # resolved to it), so it needs no update after the insert.
    for index, target in enumerate(targets):
        owner = index if target.contact_id is None and target.pending is None else target.pending
        if owner is not None:
            rows[owner]["intent_level"] = classification.higher_level(
                rows[owner]["intent_level"], items[index].intent_level
            )
    sources = [(items[i].event.source[:32], _source_record(items[i]), None) for i in creating]
    dialect = session.get_bind().dialect.name
    created = await add_contacts(
        session, [rows[i] for i in creating], search=backend_for(dialect), sources=sources, now=now
    )
    new_ids = dict(zip(creating, created, strict=True))
    origins = {item.event.source for item in items}
    found_by = f"signals:{next(iter(origins))}" if len(origins) == 1 else "signals"
    await duplicates.record_held_apart(session, targets, new_ids, found_by=found_by, now=now)
    for index, target in enumerate(targets):
        item = items[index]
        if index in new_ids:
            item.contact_number = new_ids[index]
            report.contacts_created += 1
        else:
            item.contact_number = target.contact_id if target.contact_id is not None else new_ids[target.pending or 0]
            report.contacts_linked += 1
        item.state = item.state or rows[index]["state"]
    return set(created)


def _source_record(item: Prepared) -> str:
    record = item.source_record_id or new_id("ev", 20)
    return record if len(record) <= 64 else "sha256:" + hashlib.sha256(record.encode()).hexdigest()[:56]


__all__ = ["link_contacts"]
