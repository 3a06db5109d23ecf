"""The operator's answer to a privacy request: fulfilled or denied, with who decided, when and why.

- access: the report of what the catalogue holds on the person (each record found, its fields and
  sources; the categories only when two data points matched, the values from three) and, for each
  record, how many accounts bought it and when (never which);
- deletion: the records found are erased (vpx.compliance.erasure) and entries by the hash of each of
  their emails and phones keep the person deleted when a registry brings them back;
- correction: recorded with the operator's note (the correction itself is made where the data is:
  a registry update, or the operator's own tools);
- an access, deletion or correction request that was not verified cannot be fulfilled: it is denied
  (``insuf_verification``), having been applied as an opt-out when it came.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.compliance import audit, erasure, hashing
from vpx.compliance.privacy import service
from vpx.errors import Conflict
from vpx.ids import public_number_id
from vpx.models import Contact, ContactSource, PrivacyRequest, Reveal
from vpx.suppression import service as suppression_service
from vpx.suppression.reasons import DELETION_REQUEST
from vpx.suppression.service import SuppressionKind

HELD_FIELDS = ("business_name", "phone", "email", "website", "street", "city", "state", "postal_code")


async def access_report(session: AsyncSession, request: PrivacyRequest) -> dict[str, Any]:
    """What the catalogue holds on the person, and how many accounts bought each record and when."""
    specific = len([m for m in (request.matched or "").split(",") if m]) >= service.SPECIFIC
    numbers = service.contact_numbers(request)
    records = []
    for contact in await session.scalars(select(Contact).where(Contact.id.in_(numbers)).order_by(Contact.id)):
        held = {name: getattr(contact, name) for name in HELD_FIELDS if getattr(contact, name)}
        held["license_number"] = contact.license_number
        sources = [
            {"registry": s.registry_name, "record_id": s.record_id, "file_date": s.file_date}
            for s in await session.scalars(select(ContactSource).where(ContactSource.contact_id == contact.id))
        ]
        bought = sorted(await session.scalars(select(Reveal.created_at).where(Reveal.contact_id == contact.id)))
        records.append(
            {
                "contact_id": public_number_id("ct", contact.id),
                "fields": held if specific else sorted(name for name, value in held.items() if value),
                "sources": sources,
                "bought": {"accounts": len(bought), "dates": [at.date().isoformat() for at in bought]},
            }
        )
    return {"detail": "specific" if specific else "categories", "records": records}


async def _erase(session: AsyncSession, request: PrivacyRequest, *, now: datetime) -> dict[str, Any]:
    numbers = service.contact_numbers(request)
    note = f"privacy request {request.id}"
    screens = 0
    for contact in list(await session.scalars(select(Contact).where(Contact.id.in_(numbers)))):
        for kind, value in (
            (SuppressionKind.email_hash, hashing.email_hash(contact.email)),
            (SuppressionKind.phone_hash, hashing.phone_hash(contact.phone)),
        ):
            if value is not None:
                _, created = await suppression_service.add_suppression(
                    session, kind=kind, value=value, reason=DELETION_REQUEST, note=note, now=now
                )
                screens += int(created)
    erased = await erasure.erase_contacts(session, numbers, reason=DELETION_REQUEST, note=note, now=now)
    return {"contacts_erased": len(numbers), "suppression_entries": len(erased) + screens}


async def fulfil(
    session: AsyncSession, request_id: str, *, actor: str, note: str | None, now: datetime
) -> PrivacyRequest:
    """Fulfils an open, verified request (see the module)."""
    request = await service.get_request(session, request_id, lock=True)
    if request.status != "open":
        raise Conflict(f"Privacy request {request_id} is {request.status} already.")
    if not request.verified:
        raise Conflict(
            f"Privacy request {request_id} could not be verified (it was applied as an opt-out): deny it "
            "with the reason insuf_verification, or no_match when no record was found."
        )
    if request.type == "access":
        resolution = await access_report(session, request)
    elif request.type == "deletion":
        resolution = await _erase(session, request, now=now)
    else:
        resolution = {"note": note}
    request.status, request.decided_at, request.decided_by, request.note = "fulfilled", now, actor, note
    request.resolution = json.dumps(resolution, default=str)
    await audit.record(session, kind="privacy.fulfilled", subject=request.id, now=now, type=request.type, actor=actor)
    return request


async def deny(
    session: AsyncSession, request_id: str, *, reason: str, actor: str, note: str | None, now: datetime
) -> PrivacyRequest:
    request = await service.get_request(session, request_id, lock=True)
    if request.status != "open":
        raise Conflict(f"Privacy request {request_id} is {request.status} already.")
    request.status, request.decided_at, request.decided_by = "denied", now, actor
    request.deny_reason, request.note = reason, note
    await audit.record(
        session, kind="privacy.denied", subject=request.id, now=now, type=request.type, reason=reason, actor=actor
    )
    return request
