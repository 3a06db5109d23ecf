"""Receiving a privacy request: finding the person's record, verifying the request by the data points
that match it, and applying what takes effect at once.

- The record is found by the email, the phone or the NPI given; each data point given (email, phone,
  name, postal code, NPI) that agrees with it counts. Two verify a deletion or a correction, and an
  access request for the categories held; three an access request for the specific pieces (the
  CCPA regulations' degrees). The data points that matched are kept with the request.
- An opt-out needs no verification: the email and phone given (or the record found by NPI) join the
  suppression list at once (reason ``opt_out``), which takes them out of sale, tells past buyers and
  screens later imports; the request is fulfilled.
- A request that cannot be verified is applied as an opt-out at once (``handled_as: opt_out``) and
  waits for the operator, who denies or fulfils it (`vpx privacy requests …`).
- Answers are due 45 days after receipt; records are kept 24 months, then deleted by the worker (the
  audit trail keeps their transitions, without the data points).
"""

from __future__ import annotations

import calendar
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.compliance import audit
from vpx.compliance.privacy.schemas import PrivacyRequestCreate, PrivacyRequestView, Verification
from vpx.contacts.normalise import email_key, name_key, phone_e164, postal_code
from vpx.errors import NotFound
from vpx.ids import new_id, parse_number_id, public_number_id
from vpx.models import Contact, ContactSource, PrivacyRequest
from vpx.suppression import service as suppression_service
from vpx.suppression.reasons import SuppressionReason
from vpx.suppression.service import SuppressionKind

ANSWER_WITHIN = timedelta(days=45)
KEEP_MONTHS = 24
# Data points that must match one record, by request type (the specific pieces of an access request
# need three; its categories two).
NEEDED = {"deletion": 2, "correction": 2, "access": 2}
SPECIFIC = 3
MAX_CANDIDATES = 50


@dataclass(frozen=True)
class Found:
    contacts: list[int]
    matched: list[str]

    @property
    def points(self) -> int:
        return len(self.matched)


def _words(text: str | None) -> set[str]:
    return set(name_key(text).split()) if text else set()


def _agreeing(request: PrivacyRequest, contact: Contact, npis: set[str]) -> list[str]:
    """The data points of the request the contact agrees with."""
    matched = []
    if request.email and contact.email and contact.email.lower() == request.email:
        matched.append("email")
    if request.phone and contact.phone == request.phone:
        matched.append("phone")
    given = _words(request.name)
    if given and given <= _words(contact.business_name):
        matched.append("name")
    if request.postal_code and contact.postal_code and contact.postal_code[:5] == request.postal_code[:5]:
        matched.append("postal_code")
    if request.npi and request.npi in npis:
        matched.append("npi")
    return matched


async def find_person(session: AsyncSession, request: PrivacyRequest) -> Found:
    """The contacts the request's email, phone or NPI find, and the data points the best of them
    agrees with; contacts agreeing with as many are all the person's."""
    conditions = []
    if request.email:
        conditions.append(func.lower(Contact.email) == request.email)
    if request.phone:
        conditions.append(Contact.phone == request.phone)
    if request.npi:
        conditions.append(
            Contact.id.in_(
                select(ContactSource.contact_id).where(
                    ContactSource.registry_name == "nppes", ContactSource.record_id == request.npi
                )
            )
        )
    if not conditions:
        return Found([], [])
    contacts = list(
        await session.scalars(select(Contact).where(or_(*conditions)).order_by(Contact.id).limit(MAX_CANDIDATES))
    )
    npis: dict[int, set[str]] = {}
    if request.npi and contacts:
        rows = await session.execute(
            select(ContactSource.contact_id, ContactSource.record_id).where(
                ContactSource.contact_id.in_([c.id for c in contacts]), ContactSource.registry_name == "nppes"
            )
        )
        for contact_id, record_id in rows:
            npis.setdefault(contact_id, set()).add(record_id)
    scored = [(_agreeing(request, c, npis.get(c.id, set())), c.id) for c in contacts]
    best = max((len(matched) for matched, _ in scored), default=0)
    if best == 0:
        return Found([], [])
    chosen = [(matched, contact_id) for matched, contact_id in scored if len(matched) == best]
    return Found([contact_id for _, contact_id in chosen], chosen[0][0])


async def apply_opt_out(session: AsyncSession, request: PrivacyRequest, *, now: datetime) -> list[int]:
    """The email and phone given join the suppression list (or, with neither, the records found by
    NPI); returns the entries added."""
    note = f"privacy request {request.id}"
    added: list[int] = []
    wanted: list[tuple[SuppressionKind, str]] = []
    if request.email:
        wanted.append((SuppressionKind.email, request.email))
    if request.phone:
        wanted.append((SuppressionKind.phone, request.phone))
    if not wanted:
        wanted = [(SuppressionKind.contact, public_number_id("ct", n)) for n in contact_numbers(request)]
    for kind, value in wanted:
        entry, created = await suppression_service.add_suppression(
            session, kind=kind, value=value, reason=SuppressionReason.opt_out, note=note, now=now
        )
        if created:
            added.append(entry.id)
    return added


def contact_numbers(request: PrivacyRequest) -> list[int]:
    return [n for n in (parse_number_id("ct", c) for c in (request.contact_ids or "").split(",") if c) if n]


async def receive(session: AsyncSession, body: PrivacyRequestCreate, *, now: datetime) -> PrivacyRequest:
    """Records a request, verifies it, and applies at once what takes effect at once."""
    request = PrivacyRequest(
        id=new_id("pr"),
        type=body.type,
        status="open",
        received_at=now,
        expected_by=now + ANSWER_WITHIN,
        email=email_key(body.email) if body.email else None,
        phone=phone_e164(body.phone) if body.phone else None,
        name=body.name or None,
        postal_code=postal_code(body.postal_code) if body.postal_code else None,
        npi=body.npi,
        details=body.details,
        verified=False,
    )
    if body.email and request.email is None:
        request.email = body.email.lower()  # kept as given: it still screens the list by its text
    found = await find_person(session, request)
    request.contact_ids = ",".join(public_number_id("ct", n) for n in found.contacts) or None
    request.matched = ",".join(found.matched) or None
    request.verified = body.type != "opt_out" and found.points >= NEEDED.get(body.type, 99)
    session.add(request)
    await session.flush()
    entries: list[int] = []
    if body.type == "opt_out":
        entries = await apply_opt_out(session, request, now=now)
        request.status, request.decided_at, request.decided_by = "fulfilled", now, "rule:opt_out"
        request.resolution = json.dumps({"suppression_entries": len(entries)})
    elif not request.verified:
        entries = await apply_opt_out(session, request, now=now)
        request.handled_as = "opt_out"
    await audit.record(
        session,
        kind="privacy.received",
        subject=request.id,
        now=now,
        type=request.type,
        status=request.status,
        verified=request.verified,
        matched=found.matched,
        handled_as=request.handled_as,
        suppression_entries=len(entries),
    )
    return request


async def get_request(session: AsyncSession, request_id: str, *, lock: bool = False) -> PrivacyRequest:
    request = await session.get(PrivacyRequest, request_id, with_for_update=lock) if len(request_id) <= 32 else None
    if request is None:
        raise NotFound(f"No privacy request {request_id}.")
    return request


async def list_requests(
    session: AsyncSession, *, status: str | None = None, type_: str | None = None, limit: int = 100
) -> list[PrivacyRequest]:
    query = select(PrivacyRequest).order_by(PrivacyRequest.expected_by, PrivacyRequest.id).limit(limit)
    if status:
        query = query.where(PrivacyRequest.status == status)
    if type_:
        query = query.where(PrivacyRequest.type == type_)
    return list(await session.scalars(query))


def view(request: PrivacyRequest, *, now: datetime) -> PrivacyRequestView:
    left = (request.expected_by - now).total_seconds() / 86_400 if request.status == "open" else 0.0
    resolution: dict[str, Any] | None = json.loads(request.resolution) if request.resolution else None
    return PrivacyRequestView(
        id=request.id,
        type=request.type,
        status=request.status,
        received_at=request.received_at,
        expected_by=request.expected_by,
        days_left=round(left, 2),
        email=request.email,
        phone=request.phone,
        name=request.name,
        postal_code=request.postal_code,
        npi=request.npi,
        details=request.details,
        verification=Verification(
            verified=request.verified,
            matched=[m for m in (request.matched or "").split(",") if m],
            contacts=[c for c in (request.contact_ids or "").split(",") if c],
            handled_as="opt_out" if request.handled_as == "opt_out" else None,
        ),
        decided_at=request.decided_at,
        decided_by=request.decided_by,
        deny_reason=request.deny_reason,
        note=request.note,
        resolution=resolution,
    )


def shift_months(at: datetime, months: int) -> datetime:
    """The same moment ``months`` later (earlier when negative), on the month's last day when the
    month is shorter."""
    month = at.month - 1 + months
    year, month = at.year + month // 12, month % 12 + 1
    last = calendar.monthrange(year, month)[1]
    return at.replace(year=year, month=month, day=min(at.day, last))


async def purge_expired(session: AsyncSession, *, now: datetime) -> int:
    """Requests received more than 24 months ago deleted (their audit entries stay)."""
    cutoff = shift_months(now, -KEEP_MONTHS)
    result = await session.execute(delete(PrivacyRequest).where(PrivacyRequest.received_at < cutoff))
    count = int(getattr(result, "rowcount", 0) or 0)
    if count:
        await audit.record(session, kind="privacy.purged", subject="privacy_requests", now=now, requests=count)
    return count
