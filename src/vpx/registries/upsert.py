"""Writing a batch of registry records into the catalogue, in the caller's transaction.

Upsert on the registry's own identifier (``registry_records``): an unchanged record is skipped by its
digest, a changed one updates its contact, a deactivated one takes its contact out of search when no
other active record holds it. A record the catalogue has never seen goes through entity resolution
(vpx.registries.resolution) and either merges into an existing contact or creates one. Every contact
gets its provenance row in ``contact_sources`` and its words in the search vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from sqlalchemy import Table, Text, bindparam, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.identifiers import identifiers_added, joined, parsed
from vpx.contacts.search import SearchBackend
from vpx.models import Contact, ContactSource, DecisionMaker, RegistryRecord
from vpx.quality import corrections
from vpx.registries import bulk, duplicates, resolution
from vpx.registries.matching import NAME_THRESHOLD
from vpx.registries.records import COLUMN, CONTACT_COLUMNS, ImportSummary, Ready, Row, keys_from, row_terms
from vpx.registries.seen import SeenIds

# Fields a record may leave empty; on a merge they only fill the gaps of the existing contact.
OPTIONAL_FIELDS = (
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
OPTIONAL_AT = tuple(COLUMN[name] for name in OPTIONAL_FIELDS)
IDENTIFIERS_AT = COLUMN["identifiers"]
REQUIRED_FIELDS = ("business_name", "name_key", "city", "city_key", "state", "industry")
TERM_CACHE_LIMIT = 200_000
RECORD_AMONG = "record_id = ANY(CAST(:ids AS text[]))"
# Core tables for executemany UPDATEs (the ORM would turn them into per-primary-key bulk updates).
CONTACTS: Table = Contact.__table__  # type: ignore[assignment]
RECORDS: Table = RegistryRecord.__table__  # type: ignore[assignment]
SOURCES: Table = ContactSource.__table__  # type: ignore[assignment]
PEOPLE: Table = DecisionMaker.__table__  # type: ignore[assignment]
SOURCE_COLUMNS = ("contact_id", "registry", "record_id", "file_date", "created_at")
RECORD_COLUMNS = (
    "registry", "record_id", "contact_id", "kind", "active", "owns_contact",
    "registry_status", "row_hash", "file_date", "updated_at",
)  # fmt: skip
PEOPLE_COLUMNS = ("contact_id", "name", "title", "role", "phone", "registry", "record_id", "created_at")


@dataclass
class BatchContext:
    registry: str
    file_date: date | None
    now: datetime
    search: SearchBackend
    summary: ImportSummary
    threshold: float = NAME_THRESHOLD
    table_locked: bool = False  # a bulk load holds the contacts table (vpx.registries.load_modes)
    # Words already added to the search vocabulary by this import (bounded: cleared when full).
    terms_seen: set[str] = field(default_factory=set)
    batches: int = 0
    # A bulk load of a registry the catalogue had no record of: the ids this import wrote. Only
    # these can be in the catalogue, so only these are looked up (vpx.registries.seen).
    written: SeenIds | None = None


@dataclass(frozen=True, slots=True)
class Existing:
    id: int
    contact_id: int
    row_hash: str
    active: bool
    file_date: date | None
    owns_contact: bool


async def _existing(session: AsyncSession, registry: str, record_ids: list[str]) -> dict[str, Existing]:
    columns = "record_id, id, contact_id, row_hash, active, file_date, owns_contact"
    found: dict[str, Existing] = {}
    if session.get_bind().dialect.name == "postgresql":
        result = await session.execute(
            text(f"SELECT {columns} FROM registry_records WHERE registry = :registry AND {RECORD_AMONG}"),
            {"registry": registry, "ids": record_ids},
        )
        for row in result:
            found[row[0]] = Existing(row[1], row[2], row[3], row[4], row[5], row[6])
        return found
    # SQLite: driver SQL; a statement per parameter count would crowd SQLAlchemy's compiled cache.
    connection = await session.connection()
    for chunk in bulk.sqlite_chunks(record_ids):
        marks = ", ".join("?" for _ in chunk)
        result = await connection.exec_driver_sql(
            f"SELECT {columns} FROM registry_records WHERE registry = ? AND record_id IN ({marks})", (registry, *chunk)
        )
        for row in result:
            found[row[0]] = Existing(row[1], row[2], row[3], bool(row[4]), _sqlite_date(row[5]), bool(row[6]))
    return found


def _sqlite_date(value: Any) -> date | None:
    return date.fromisoformat(value) if isinstance(value, str) else value


async def write_contact_batch(
    session: AsyncSession,
    records: list[Ready],
    ctx: BatchContext,
    *,
    terms: set[str] | None = None,
) -> None:
    """Applies one batch of records; counts land in ``ctx.summary``. ``terms``: the batch's search
    words when the reader computed them."""
    summary = ctx.summary
    by_id: dict[str, Ready] = {}
    for record in records:
        if record.record_id in by_id:
            summary.skip("duplicate_record", f"{ctx.registry} {record.record_id}: listed again later in the file")
        by_id[record.record_id] = record
    written = ctx.written
    maybe_known = list(by_id) if written is None else [record_id for record_id in by_id if record_id in written]
    existing = await _existing(session, ctx.registry, maybe_known) if maybe_known else {}

    new: list[Ready] = []
    changed: list[tuple[Existing, Ready]] = []
    for record_id, record in by_id.items():
        known = existing.get(record_id)
        if known is not None:
            if known.file_date and ctx.file_date and known.file_date > ctx.file_date:
                summary.skip("older_file", f"{ctx.registry} {record_id}: the catalogue has it from {known.file_date}")
            elif known.row_hash == record.digest:
                summary.unchanged += 1
            else:
                changed.append((known, record))
        elif not record.active or record.row is None:
            summary.skip("deactivated", f"{ctx.registry} {record_id}: deactivated, and not in the catalogue")
        else:
            new.append(record)

    touched_people: list[tuple[int, Ready]] = []
    await _refresh_statistics(session, ctx)
    new_rows = await _add_new(session, new, ctx, touched_people)
    if written is not None:
        for record in new:
            written.add(record.record_id)
    updated_rows = await _apply_changes(session, changed, ctx, touched_people)
    # Only records the catalogue knew can have decision-makers to replace: new ones are written in
    # the transaction that writes their record.
    await _delete_people(session, ctx.registry, [record.record_id for _, record in changed])
    await _add_people(session, touched_people, ctx)
    if new_rows or updated_rows:
        await _add_terms(session, terms if terms is not None else row_terms(new_rows + updated_rows), ctx)


async def _refresh_statistics(session: AsyncSession, ctx: BatchContext) -> None:
    """PostgreSQL plans the blocking lookups on the expression index only once it has statistics for
    it; a large import outruns autovacuum, so contacts are analysed after batches 2, 4, 8, 16, …
    (measured: 0.8 ms a lookup on the (state, city) index vs 0.014 ms on the block index)."""
    ctx.batches += 1
    if ctx.batches >= 2 and ctx.batches & (ctx.batches - 1) == 0 and session.get_bind().dialect.name == "postgresql":
        await session.execute(text("ANALYZE contacts"))
        # And the records the upsert looks up by registry id: with statistics from an empty table
        # the lookup cost 14 µs a row at 1,000,000 rows instead of 2.
        await session.execute(text("ANALYZE registry_records"))


def _filled(row: Row, other: Row) -> Row:
    """``row`` with its empty optional fields taken from ``other``, and the strong identifiers of both."""
    identifiers = row[IDENTIFIERS_AT]
    if other[IDENTIFIERS_AT] is not None and other[IDENTIFIERS_AT] != identifiers:
        identifiers = joined([*parsed(identifiers), *parsed(other[IDENTIFIERS_AT])])
    if identifiers == row[IDENTIFIERS_AT] and all(row[i] is not None or other[i] is None for i in OPTIONAL_AT):
        return row
    values = list(row)
    for i in OPTIONAL_AT:
        if values[i] is None:
            values[i] = other[i]
    values[IDENTIFIERS_AT] = identifiers
    return tuple(values)


def _params(row: Row, contact_id: int, names: tuple[str, ...]) -> dict[str, Any]:
    return {"b_id": contact_id, **{f"b_{name}": row[COLUMN[name]] for name in names}}


async def _add_new(
    session: AsyncSession,
    new: list[Ready],
    ctx: BatchContext,
    touched_people: list[tuple[int, Ready]],
) -> list[Row]:
    if not new:
        return []
    rows: list[Row] = [record.row for record in new if record.row is not None]
    targets = await resolution.resolve_keys(
        session, [keys_from(r.keys) if r.keys is not None else None for r in new], threshold=ctx.threshold
    )
    # Records merged into a contact created earlier in this batch fill that contact's gaps before it is written.
    creating = [index for index, target in enumerate(targets) if target.pending is None and target.contact_id is None]
    for index, target in enumerate(targets):
        if target.pending is not None:
            rows[target.pending] = _filled(rows[target.pending], rows[index])
    allocated = await bulk.allocate_ids(session, CONTACTS, len(creating), table_locked=ctx.table_locked)
    ids = dict(zip(creating, allocated, strict=True))
    created_rows = [rows[index] for index in creating]
    if created_rows:
        columns: tuple[str, ...] = ("id", *CONTACT_COLUMNS)
        values = [(ids[i], *rows[i]) for i in creating]
        await bulk.insert_rows(session, CONTACTS, columns, values)

    merges_into_existing: list[dict[str, Any]] = []
    sources: list[tuple[Any, ...]] = []
    records: list[tuple[Any, ...]] = []
    registry, file_date, now, summary = ctx.registry, ctx.file_date, ctx.now, ctx.summary
    for index, record in enumerate(new):
        contact_id = ids.get(index)
        owns = contact_id is not None
        if contact_id is None:
            target = targets[index]
            if target.pending is not None:
                contact_id = ids[target.pending]
            else:
                assert target.contact_id is not None
                contact_id = target.contact_id
                merges_into_existing.append(_params(rows[index], contact_id, (*OPTIONAL_FIELDS, "identifiers")))
        sources.append((contact_id, registry, record.record_id, file_date, now))
        records.append(
            (registry, record.record_id, contact_id, record.kind, True, owns, record.registry_status, record.digest,
             file_date, now)
        )  # fmt: skip
        if record.people:
            touched_people.append((contact_id, record))
    summary.created += len(creating)
    summary.merged += len(new) - len(creating)
    await duplicates.record_held_apart(session, targets, ids, found_by=f"registry:{registry}", now=now)
    await bulk.insert_rows(session, SOURCES, SOURCE_COLUMNS, sources)
    await bulk.insert_rows(session, RECORDS, RECORD_COLUMNS, records)
    if merges_into_existing:
        await _fill_contact_gaps(session, merges_into_existing, ctx.now)
    return created_rows


async def _fill_contact_gaps(session: AsyncSession, params: list[dict[str, Any]], now: datetime) -> None:
    values: dict[str, Any] = {name: func.coalesce(CONTACTS.c[name], bindparam(f"b_{name}")) for name in OPTIONAL_FIELDS}
    if params and "b_identifiers" in params[0]:
        values["identifiers"] = identifiers_added(CONTACTS.c.identifiers, bindparam("b_identifiers", type_=Text))
    await session.execute(
        update(CONTACTS).where(CONTACTS.c.id == bindparam("b_id")).values(**values, updated_at=now), params
    )


async def _apply_changes(
    session: AsyncSession,
    changed: list[tuple[Existing, Ready]],
    ctx: BatchContext,
    touched_people: list[tuple[int, Ready]],
) -> list[Row]:
    if not changed:
        return []
    owned: list[dict[str, Any]] = []
    gaps: list[dict[str, Any]] = []
    rows: list[Row] = []
    record_updates: list[dict[str, Any]] = []
    for known, record in changed:
        record_updates.append(
            {
                "b_id": known.id,
                "b_active": record.active,
                "b_registry_status": record.registry_status,
                "b_row_hash": record.digest,
                "b_file_date": ctx.file_date,
            }
        )
        if record.active and record.people:
            touched_people.append((known.contact_id, record))
        if not record.active or record.row is None:
            ctx.summary.deactivated += 1
            continue
        ctx.summary.updated += 1
        rows.append(record.row)
        if known.owns_contact:
            owned.append(_params(record.row, known.contact_id, OPTIONAL_FIELDS + REQUIRED_FIELDS))
        else:
            gaps.append(_params(record.row, known.contact_id, OPTIONAL_FIELDS))
    await session.execute(
        update(RECORDS)
        .where(RECORDS.c.id == bindparam("b_id"))
        .values(
            active=bindparam("b_active"),
            registry_status=bindparam("b_registry_status"),
            row_hash=bindparam("b_row_hash"),
            file_date=bindparam("b_file_date"),
            updated_at=ctx.now,
        ),
        record_updates,
    )
    if owned:
        # Past buyers of a contact whose phone, email, website or address the update replaces are told.
        revealed = await corrections.revealed_fields(session, [params["b_id"] for params in owned])
        values: dict[str, Any] = {name: bindparam(f"b_{name}") for name in REQUIRED_FIELDS}
        values |= {name: func.coalesce(bindparam(f"b_{name}"), CONTACTS.c[name]) for name in OPTIONAL_FIELDS}
        await session.execute(
            update(CONTACTS).where(CONTACTS.c.id == bindparam("b_id")).values(**values, updated_at=ctx.now), owned
        )
        await corrections.announce_replacements(session, revealed, now=ctx.now)
    if gaps:
        await _fill_contact_gaps(session, gaps, ctx.now)
    await _refresh_status(session, sorted({known.contact_id for known, _ in changed}), ctx.now)
    return rows


async def _refresh_status(session: AsyncSession, contact_ids: list[int], now: datetime) -> None:
    """A registry contact is searchable while at least one of its registry records is active."""
    holds_active = (
        select(RegistryRecord.id)
        .where(RegistryRecord.contact_id == Contact.id, RegistryRecord.active.is_(True))
        .exists()
    )
    for status, condition in (("deactivated", ~holds_active), ("active", holds_active)):
        await session.execute(
            update(Contact)
            .where(Contact.id.in_(contact_ids), Contact.origin == "registry", Contact.status != status, condition)
            .values(status=status, updated_at=now)
            .execution_options(synchronize_session=False)
        )


async def _delete_people(session: AsyncSession, registry: str, record_ids: list[str]) -> None:
    if not record_ids:
        return
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(
            text(f"DELETE FROM decision_makers WHERE registry = :registry AND {RECORD_AMONG}"),
            {"registry": registry, "ids": record_ids},
        )
        return
    connection = await session.connection()
    for chunk in bulk.sqlite_chunks(record_ids):
        marks = ", ".join("?" for _ in chunk)
        await connection.exec_driver_sql(
            f"DELETE FROM decision_makers WHERE registry = ? AND record_id IN ({marks})", (registry, *chunk)
        )


async def _add_people(session: AsyncSession, touched: list[tuple[int, Ready]], ctx: BatchContext) -> None:
    people = [
        (contact_id, name, title, role, phone, ctx.registry, record.record_id, ctx.now)
        for contact_id, record in touched
        for name, title, role, phone in record.people
    ]
    await bulk.insert_rows(session, PEOPLE, PEOPLE_COLUMNS, people)


async def _add_terms(session: AsyncSession, words: set[str], ctx: BatchContext) -> None:
    terms = words - ctx.terms_seen
    if not terms:
        return
    await ctx.search.add_terms(session, terms)
    if len(ctx.terms_seen) + len(terms) > TERM_CACHE_LIMIT:
        ctx.terms_seen.clear()
    ctx.terms_seen |= terms
