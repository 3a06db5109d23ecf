"""Possible duplicates: pairs of contacts that a matching rule would have joined but conflicting strong
evidence kept apart (vpx.registries.matching), recorded wherever records are matched (registry
imports, evidence and signals, contributions) for an operator to merge or dismiss
(`vpx registries duplicates`). Contributions record a business sent many times as a star: each new
contact paired with the business's first one (vpx.publishers.dedup), so the pairs grow with the rows,
not with their square.

Merging moves everything that points at the newer contact (provenance, registry records,
decision-makers, signals, reveals, auto-buy purchases, research activity, companies) to the kept one,
fills the kept contact's empty fields, adds the other's phone, domain and identifiers to its own (so
later records carrying either agree with it), and takes the other out of search and reveal
(``status = merged``). Buyers of either who now hold a suppressed contact they were not told of
are told, as a new suppression entry tells its buyers. Dismissing records the operator's answer:
the pair is never listed again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, and_, delete, exists, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from vpx.contacts.identifiers import joined, parsed, phone_token, website_token
from vpx.db import Base
from vpx.errors import InvalidParameters, NotFound
from vpx.ids import parse_number_id, public_number_id
from vpx.models import (
    AutoBuyPurchase,
    Company,
    Contact,
    ContactSource,
    DecisionMaker,
    PossibleDuplicate,
    RegistryRecord,
    Reveal,
    Signal,
    Suppression,
    TopicActivity,
)
from vpx.registries.resolution import Target
from vpx.signals.classification import higher_level
from vpx.suppression import service as suppression_service

STATUSES = ("open", "merged", "dismissed")
# Pairs stored per statement: 7 parameters each (PostgreSQL's driver takes at most 32,767).
RECORD_CHUNK = 250
# Contact fields a merge fills in the kept contact when they are empty there.
GAP_FIELDS = (
    "street",
    "postal_code",
    "phone",
    "email",
    "website",
    "website_domain",
    "specialty",
    "specialty_key",
    "license_type",
    "license_type_key",
    "license_number",
    "license_state",
)


@dataclass(frozen=True, slots=True)
class HeldPair:
    contact_id: int
    other_contact_id: int
    reason: str
    name_score: int


def held_pairs(targets: Sequence[Target], created: dict[int, int]) -> list[HeldPair]:
    """The possible duplicates of a resolved batch: for each record a veto held apart from a
    contact, the contact the record went to (``created``: batch index → new contact id) and that one."""
    pairs: dict[tuple[int, int], HeldPair] = {}
    for index, target in enumerate(targets):
        if not target.held_apart:
            continue
        mine = created.get(index)
        if mine is None:
            mine = created.get(target.pending) if target.pending is not None else target.contact_id
        if mine is None:
            continue
        for held in target.held_apart:
            other = held.contact_id
            if other is None and held.pending is not None:
                other = created.get(held.pending)
            if other is None or other == mine:
                continue
            low, high = min(mine, other), max(mine, other)
            pairs.setdefault((low, high), HeldPair(low, high, held.reason, round(held.score)))
    return list(pairs.values())


async def record(session: AsyncSession, pairs: Sequence[HeldPair], *, found_by: str, now: datetime) -> int:
    """Stores the pairs not stored before (a dismissed pair stays dismissed); returns how many were new.
    One statement compiled once, run for each ``RECORD_CHUNK`` pairs: far from the drivers' limits on
    parameters however many pairs a batch holds."""
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    table = _table(PossibleDuplicate)
    statement = (
        dialect.insert(table)
        .on_conflict_do_nothing(index_elements=["contact_id", "other_contact_id"])
        .returning(table.c.id)
    )
    new = 0
    for start in range(0, len(pairs), RECORD_CHUNK):
        rows = [
            {
                "contact_id": p.contact_id,
                "other_contact_id": p.other_contact_id,
                "reason": p.reason,
                "name_score": p.name_score,
                "found_by": found_by[:64],
                "status": "open",
                "created_at": now,
            }
            for p in pairs[start : start + RECORD_CHUNK]
        ]
        new += len((await session.execute(statement, rows)).all())
    return new


async def record_held_apart(
    session: AsyncSession, targets: Sequence[Target], created: dict[int, int], *, found_by: str, now: datetime
) -> int:
    return await record(session, held_pairs(targets, created), found_by=found_by, now=now)


def _contact_view(contact: Contact) -> dict[str, Any]:
    return {
        "id": public_number_id("ct", contact.id),
        "business_name": contact.business_name,
        "street": contact.street,
        "city": contact.city,
        "state": contact.state,
        "phone": contact.phone,
        "website": contact.website,
        "license": {"type": contact.license_type, "number": contact.license_number, "state": contact.license_state}
        if contact.license_number
        else None,
        "identifiers": sorted(parsed(contact.identifiers)),
        "origin": contact.origin,
        "status": contact.status,
    }


def _view(pair: PossibleDuplicate, contacts: dict[int, Contact], sources: dict[int, list[str]]) -> dict[str, Any]:
    shown = []
    for contact_id in (pair.contact_id, pair.other_contact_id):
        contact = contacts.get(contact_id)
        if contact is not None:
            shown.append({**_contact_view(contact), "sources": sources.get(contact_id, [])})
    return {
        "id": public_number_id("pd", pair.id),
        "status": pair.status,
        "reason": pair.reason,
        "name_score": pair.name_score,
        "found_by": pair.found_by,
        "created_at": pair.created_at,
        "resolved_at": pair.resolved_at,
        "resolved_by": pair.resolved_by,
        "contacts": shown,
    }


async def list_pairs(
    session: AsyncSession, *, status: str | None = "open", limit: int = 100, after: str | None = None
) -> dict[str, Any]:
    """Possible duplicates, oldest first, with both contacts as the operator needs them to decide."""
    if status is not None and status not in STATUSES:
        raise InvalidParameters.field("status", f"must be one of {', '.join(STATUSES)} or all")
    query = select(PossibleDuplicate).order_by(PossibleDuplicate.id).limit(limit)
    if status is not None:
        query = query.where(PossibleDuplicate.status == status)
    if after is not None:
        after_id = parse_number_id("pd", after)
        if after_id is None:
            raise InvalidParameters.field("after", f"{after!r} is not a possible-duplicate id (pd_…)")
        query = query.where(PossibleDuplicate.id > after_id)
    pairs = list(await session.scalars(query))
    ids = sorted({i for p in pairs for i in (p.contact_id, p.other_contact_id)})
    contacts = {c.id: c for c in await session.scalars(select(Contact).where(Contact.id.in_(ids)))} if ids else {}
    sources: dict[int, list[str]] = {}
    if ids:
        rows = await session.execute(
            select(ContactSource.contact_id, ContactSource.registry_name, ContactSource.record_id)
            .where(ContactSource.contact_id.in_(ids))
            .order_by(ContactSource.id)
        )
        for contact_id, registry, record_id in rows:
            sources.setdefault(contact_id, []).append(f"{registry}:{record_id}")
    counts = dict(
        (await session.execute(select(PossibleDuplicate.status, func.count()).group_by(PossibleDuplicate.status))).all()
    )
    views = [_view(p, contacts, sources) for p in pairs]
    return {
        "duplicates": views,
        "counts": {s: int(counts.get(s, 0)) for s in STATUSES},
        "next_after": views[-1]["id"] if len(views) == limit else None,
    }


async def _pair(session: AsyncSession, public_id: str) -> PossibleDuplicate:
    number = parse_number_id("pd", public_id)
    pair = await session.get(PossibleDuplicate, number, with_for_update=True) if number is not None else None
    if pair is None:
        raise NotFound(f"no possible duplicate {public_id}")
    return pair


async def dismiss(session: AsyncSession, public_id: str, *, by: str, now: datetime) -> dict[str, Any]:
    """The operator says the two are different businesses: the pair is closed and never listed as open again."""
    pair = await _pair(session, public_id)
    if pair.status == "open":
        pair.status, pair.resolved_at, pair.resolved_by = "dismissed", now, by[:120]
    return {"id": public_id, "status": pair.status, "resolved_at": pair.resolved_at, "resolved_by": pair.resolved_by}


async def merge(
    session: AsyncSession, public_id: str, *, keep: str | None = None, by: str, now: datetime
) -> dict[str, Any]:
    """The operator says the two are one business: the other contact is merged into the kept one (by
    default the older). Merging a pair merged already answers as before; a dismissed pair is refused."""
    pair = await _pair(session, public_id)
    kept_id, gone_id = pair.contact_id, pair.other_contact_id
    if keep is not None:
        chosen = parse_number_id("ct", keep)
        if chosen not in (kept_id, gone_id):
            raise InvalidParameters.field("keep", f"{keep!r} is not one of the pair's contacts")
        if chosen == gone_id:
            kept_id, gone_id = gone_id, kept_id
    if pair.status == "merged":
        return _merged_view(public_id, pair)
    if pair.status != "open":
        raise InvalidParameters.field("id", f"{public_id} was {pair.status}; it cannot be merged")
    kept = await session.get(Contact, kept_id, with_for_update=True)
    gone = await session.get(Contact, gone_id, with_for_update=True)
    if kept is None or gone is None or kept.status != "active" or gone.status != "active":
        raise InvalidParameters.field("id", f"{public_id}: both contacts must be active to be merged")
    await _move_references(session, kept_id, gone_id)
    tokens = [*parsed(kept.identifiers), *parsed(gone.identifiers)]
    if gone.phone and gone.phone != kept.phone:
        tokens.append(phone_token(gone.phone) or "")
    if gone.website and website_token(gone.website) != website_token(kept.website):
        tokens.append(website_token(gone.website) or "")
    for name in GAP_FIELDS:
        if getattr(kept, name) is None and getattr(gone, name) is not None:
            setattr(kept, name, getattr(gone, name))
    # The phone or website just filled in from the other is the kept contact's own now, not an extra.
    tokens = [t for t in tokens if t not in (phone_token(kept.phone), website_token(kept.website))]
    kept.identifiers = joined(tokens)
    kept.intent_level = higher_level(kept.intent_level, gone.intent_level)
    kept.updated_at = gone.updated_at = now
    gone.status = "merged"
    pair.status, pair.resolved_at, pair.resolved_by = "merged", now, by[:120]
    # Keep the kept contact's own choice when the pair is merged the other way round.
    if kept_id != pair.contact_id:
        pair.contact_id, pair.other_contact_id = kept_id, gone_id
    await _repoint_pairs(session, kept_id, gone_id, pair.id)
    # D15: the kept contact's buyers now include the other's, and its entries may too (the other's
    # entry copied, or an entry on a phone or email it took over): whoever now holds a reveal of a
    # suppressed contact without having been told is told, as a new entry tells its buyers.
    await suppression_service.tell_buyers_of(session, kept, now=now)
    return _merged_view(public_id, pair)


def _merged_view(public_id: str, pair: PossibleDuplicate) -> dict[str, Any]:
    return {
        "id": public_id,
        "status": pair.status,
        "kept": public_number_id("ct", pair.contact_id),
        "merged": public_number_id("ct", pair.other_contact_id),
        "resolved_at": pair.resolved_at,
        "resolved_by": pair.resolved_by,
    }


def _table(model: type[Base]) -> Table:
    return cast(Table, model.__table__)


async def _move_references(session: AsyncSession, kept: int, gone: int) -> None:
    for moved in map(_table, (ContactSource, DecisionMaker, Signal, Company)):
        await session.execute(update(moved).where(moved.c.contact_id == gone).values(contact_id=kept))
    await session.execute(
        update(RegistryRecord).where(RegistryRecord.contact_id == gone).values(contact_id=kept, owns_contact=False)
    )
    # One reveal (and one auto-buy purchase) per account and contact: an account that bought both keeps
    # the kept one's; the other's row goes (its ledger entries stay).
    for bought in map(_table, (Reveal, AutoBuyPurchase)):
        other = bought.alias()
        has_kept = exists().where(other.c.account_id == bought.c.account_id, other.c.contact_id == kept)
        await session.execute(delete(bought).where(bought.c.contact_id == gone, has_kept))
        await session.execute(update(bought).where(bought.c.contact_id == gone).values(contact_id=kept))
    # Research activity: the same topic and day add up.
    same_day = aliased(TopicActivity)
    rows = (
        await session.execute(
            select(TopicActivity.topic, TopicActivity.day, TopicActivity.events).where(TopicActivity.contact_id == gone)
        )
    ).all()
    for topic, day, events in rows:
        found = await session.get(same_day, (kept, topic, day))
        if found is not None:
            found.events += events
            await session.execute(
                delete(TopicActivity).where(
                    TopicActivity.contact_id == gone, TopicActivity.topic == topic, TopicActivity.day == day
                )
            )
    await session.execute(update(TopicActivity).where(TopicActivity.contact_id == gone).values(contact_id=kept))
    # A contact the suppression list names stays suppressed under the kept contact's id.
    suppressed = await session.scalars(
        select(Suppression).where(Suppression.kind == "contact", Suppression.value == public_number_id("ct", gone))
    )
    for entry in list(suppressed):
        value = public_number_id("ct", kept)
        already = await session.scalar(
            select(Suppression.id).where(Suppression.kind == "contact", Suppression.value == value)
        )
        if already is None:
            session.add(
                Suppression(
                    kind="contact", value=value, reason=entry.reason, note=entry.note, created_at=entry.created_at
                )
            )
    await session.flush()


async def _repoint_pairs(session: AsyncSession, kept: int, gone: int, merged_pair: int) -> None:
    """Other open pairs of the merged contact now concern the kept one (or close, when they would
    pair it with itself or repeat a pair)."""
    others = list(
        await session.scalars(
            select(PossibleDuplicate).where(
                PossibleDuplicate.id != merged_pair,
                or_(PossibleDuplicate.contact_id == gone, PossibleDuplicate.other_contact_id == gone),
            )
        )
    )
    for pair in others:
        other = pair.other_contact_id if pair.contact_id == gone else pair.contact_id
        low, high = min(kept, other), max(kept, other)
        taken = await session.scalar(
            select(PossibleDuplicate.id).where(
                and_(PossibleDuplicate.contact_id == low, PossibleDuplicate.other_contact_id == high)
            )
        )
        if other == kept or taken is not None:
            await session.delete(pair)
        else:
            pair.contact_id, pair.other_contact_id = low, high
    await session.flush()
