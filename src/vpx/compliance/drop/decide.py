"""Deciding DROP's work items: each hash matched against the contacts' hashes of the same kind, and
the answer acted on before it is given.

- one contact has the hash: the contact is erased (vpx.compliance.erasure: out of search and reveal,
  its personal fields emptied, its past buyers told ``contact.suppressed``) and an entry by the hash
  (reason ``drop_deletion``) keeps it, and anyone who has it later, deleted → status 3;
- several contacts share it (an office's line, a shared inbox): all of them leave sale through an
  entry by the hash (``drop_opt_out``; their buyers told), their fields kept → 4;
- none has it: the entry by the hash (``drop_deletion``) still erases a contact imported later with
  it → 5;
- the operator declared the item exempt (``vpx drop exempt``) before it was decided → 2, nothing done.
A list vpx holds nothing of (NDZ, MAID…) cannot match: 5.

Items are decided a thousand at a time, each thousand one transaction with its audit entry, so a
crash resumes with the items left (an item's status is written with what it did).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.compliance import audit, erasure
from vpx.db import Database, insert_unless_exists
from vpx.models import Contact, DropBatch, DropItem, Suppression
from vpx.suppression import service as suppression_service
from vpx.suppression.reasons import DROP_DELETION, DROP_OPT_OUT
from vpx.suppression.service import SuppressionKind

CHUNK = 1_000
LOOKUP = 500
HASH_KINDS = {"Email": SuppressionKind.email_hash, "Phone": SuppressionKind.phone_hash}
EXEMPTED, DELETED, OPTED_OUT, NOT_FOUND = 2, 3, 4, 5


async def _matches(session: AsyncSession, list_type: str, hashes: list[str]) -> dict[str, list[int]]:
    """The contacts of each hash (every contact, active or not: all hold personal information)."""
    column = Contact.email_hash if list_type == "Email" else Contact.phone_hash
    found: dict[str, list[int]] = {}
    for start in range(0, len(hashes), LOOKUP):
        part = hashes[start : start + LOOKUP]
        for value, contact_id in await session.execute(select(column, Contact.id).where(column.in_(part))):
            if value is not None:
                found.setdefault(value, []).append(contact_id)
    return found


async def _screen(session: AsyncSession, items: list[DropItem], *, now: datetime) -> dict[int, list[int]]:
    """Entries by hash for items nothing matched: one statement per kind. Returns, by item, the ids of
    the entries it added."""
    added: dict[int, list[int]] = {}
    for list_type, kind in HASH_KINDS.items():
        mine = [item for item in items if item.list_type == list_type]
        if not mine:
            continue
        rows = [
            {
                "kind": kind.value,
                "value": item.hash,
                "reason": DROP_DELETION,
                "note": f"DROP work item {item.item_id}",
                "created_at": now,
            }
            for item in mine
        ]
        by_hash: dict[str, int] = {}
        for start in range(0, len(rows), LOOKUP):
            inserted = await session.execute(
                insert_unless_exists(session, Suppression)
                .values(rows[start : start + LOOKUP])
                .returning(Suppression.id, Suppression.value)
            )
            by_hash.update({value: entry_id for entry_id, value in inserted})
        for item in mine:
            if item.hash in by_hash:
                added[item.id] = [by_hash.pop(item.hash)]
    return added


async def _decide_item(
    session: AsyncSession, item: DropItem, ids: list[int], *, now: datetime
) -> tuple[int, list[int]]:
    """Acts on one matched item; its status and the entries it added."""
    note = f"DROP work item {item.item_id}"
    kind = HASH_KINDS[item.list_type]
    if len(ids) == 1:
        entry, created = await suppression_service.add_suppression(
            session, kind=kind, value=item.hash, reason=DROP_DELETION, note=note, now=now
        )
        erased = await erasure.erase_contacts(session, ids, reason=DROP_DELETION, note=note, now=now)
        return DELETED, ([entry.id] if created else []) + erased
    entry, created = await suppression_service.add_suppression(
        session, kind=kind, value=item.hash, reason=DROP_OPT_OUT, note=note, now=now
    )
    return OPTED_OUT, [entry.id] if created else []


async def decide_chunk(database: Database, batch_id: str, *, now: datetime) -> int:
    """Decides up to a thousand of the batch's undecided items in one transaction; how many."""
    async with database.writer_turn(), database.write_sessions() as session, session.begin():
        query = (
            select(DropItem)
            .where(DropItem.batch_id == batch_id, DropItem.status.is_(None))
            .order_by(DropItem.id)
            .limit(CHUNK)
        )
        if not database.is_sqlite:
            query = query.with_for_update(skip_locked=True)
        items = list(await session.scalars(query))
        if not items:
            return 0
        matches: dict[str, dict[str, list[int]]] = {}
        for list_type in HASH_KINDS:
            hashes = sorted({i.hash for i in items if i.list_type == list_type and i.exempt_reason is None})
            matches[list_type] = await _matches(session, list_type, hashes) if hashes else {}
        unmatched: list[DropItem] = []
        decided: dict[int, list[str]] = {}
        for item in items:
            ids = matches.get(item.list_type, {}).get(item.hash, [])
            entries: list[int] = []
            if item.exempt_reason is not None:
                status = EXEMPTED
            elif item.list_type not in HASH_KINDS:
                status = NOT_FOUND  # vpx holds no identifier of this list
            elif not ids:
                status = NOT_FOUND
                unmatched.append(item)
            else:
                status, entries = await _decide_item(session, item, sorted(set(ids)), now=now)
            item.status, item.matched, item.decided_at = status, len(set(ids)), now
            item.entry_ids = ",".join(map(str, entries)) or None
            decided.setdefault(status, []).append(item.item_id)
        for item_id, entries in (await _screen(session, unmatched, now=now)).items():
            item = next(i for i in items if i.id == item_id)
            item.entry_ids = ",".join(map(str, entries))
        await session.flush()
        await audit.record(
            session,
            kind="drop.decided",
            subject=f"drop_batch:{batch_id}",
            now=now,
            counts={str(status): len(ids) for status, ids in sorted(decided.items())},
            items={str(status): ids for status, ids in sorted(decided.items())},
        )
        return len(items)


async def decide_all(database: Database, batch_id: str, *, now: datetime) -> dict[str, int]:
    """Decides every undecided item of the batch; the batch's items by status then."""
    while await decide_chunk(database, batch_id, now=now):
        pass
    async with database.writer_turn(), database.write_sessions() as session, session.begin():
        await session.execute(
            update(DropBatch).where(DropBatch.id == batch_id, DropBatch.processed_at.is_(None)).values(processed_at=now)
        )
        return await status_counts(session, batch_id)


async def status_counts(session: AsyncSession, batch_id: str) -> dict[str, int]:
    rows = await session.execute(select(DropItem.status).where(DropItem.batch_id == batch_id))
    counts: Counter[str] = Counter()
    for (status,) in rows:
        counts[_name(status)] += 1
    return dict(sorted(counts.items()))


def _name(status: Any) -> str:
    return {EXEMPTED: "exempted", DELETED: "deleted", OPTED_OUT: "opted_out", NOT_FOUND: "not_found"}.get(
        status, "undecided"
    )
