"""The Do-Not-Call registry's data in vpx: imports by area code, what it says of a phone, and its age.

A seller must screen calls against a registry version obtained at most 31 days before the call
(16 CFR 310.4(b)(3)(iv)). So every phone a reveal shows carries ``phone_dnc``: whether the registry
lists it and the version that says so, or ``listed: null`` when its area code was never imported or
its newest data is older than 31 days (vpx cannot tell). A person's own request not to be called
(an entry of the suppression list on the phone channel, kind ``do_not_call``) shows as
``requested: true`` whatever the registry says.

``contacts.phone_dnc`` holds the same answer for search (null without a phone, else unknown, listed,
clear or requested): a trigger keeps it when a contact is written, the import when an area code's
data changes, and the worker when an area code's data ages out (``refresh_freshness``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import Table, delete, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.compliance import audit
from vpx.compliance.dnc.files import DncFile, DncFileError, read_file
from vpx.contacts.schemas import PhoneDnc
from vpx.db import Database, insert_unless_exists
from vpx.models import DncAreaCode, DncNumber, Suppression
from vpx.registries import bulk

FRESH_DAYS = 31
AREA_SPAN = 10_000_000  # the numbers of one area code: [area * span, (area + 1) * span)
_NUMBERS: Table = DncNumber.__table__  # type: ignore[assignment]
Mode = Literal["full", "changes"]

__all__ = ["DncFileError", "ImportReport", "PhoneDnc", "import_file", "lookup"]


def is_fresh(version_date: date, today: date) -> bool:
    """Whether data of that version may still screen a call made ``today`` (31 days at most)."""
    return (today - version_date).days <= FRESH_DAYS


def ten_digits(phone: str | None) -> int | None:
    """A US number's ten digits (E.164 ``+1`` and ten digits), else None."""
    if phone and len(phone) == 12 and phone.startswith("+1") and phone[2:].isdigit():
        return int(phone[2:])
    return None


async def lookup(session: AsyncSession, phones: Iterable[str | None], *, today: date) -> dict[str, PhoneDnc]:
    """``phone_dnc`` of each phone (E.164), in three reads whatever their number."""
    wanted = sorted({p for p in phones if p})
    if not wanted:
        return {}
    numbers = {p: ten_digits(p) for p in wanted}
    areas = sorted({str(n // AREA_SPAN) for n in numbers.values() if n is not None})
    versions: dict[str, date] = {}
    if areas:
        rows = await session.execute(
            select(DncAreaCode.area_code, DncAreaCode.version_date).where(DncAreaCode.area_code.in_(areas))
        )
        versions = {area: version for area, version in rows}
    asked = [n for n in numbers.values() if n is not None and str(n // AREA_SPAN) in versions]
    listed = set(await session.scalars(select(DncNumber.number).where(DncNumber.number.in_(asked)))) if asked else set()
    requested = set(
        await session.scalars(
            select(Suppression.value).where(Suppression.kind == "do_not_call", Suppression.value.in_(wanted))
        )
    )
    found: dict[str, PhoneDnc] = {}
    for phone, number in numbers.items():
        version = versions.get(str(number // AREA_SPAN)) if number is not None else None
        fresh = version is not None and is_fresh(version, today)
        found[phone] = PhoneDnc(
            listed=(number in listed) if fresh else None,
            registry_date=version if fresh else None,
            requested=phone in requested,
        )
    return found


def from_column(column: str | None, version: date | None, *, today: date) -> PhoneDnc:
    """``phone_dnc`` from ``contacts.phone_dnc`` and the area code's version date (what the reveal
    reads in its one statement); a version past 31 days tells nothing, whatever the column says yet."""
    if column in ("listed", "clear") and version is not None and is_fresh(version, today):
        return PhoneDnc(listed=column == "listed", registry_date=version, requested=False)
    return PhoneDnc(listed=None, registry_date=None, requested=column == "requested")


def callable_phone(state: PhoneDnc | None) -> bool:
    """Whether a buyer asking to leave out do-not-call phones keeps this one: no phone at all, or a
    phone a current registry version does not list and nobody asked not to be called on."""
    return state is None or (state.listed is False and not state.requested)


def phone_dnc_sql(dialect: str) -> str:
    """``contacts.phone_dnc`` of the statement's contact, as the trigger of migration 20261203_compliance
    computes it (nested CASEs: the cast only ever sees a US number)."""
    us = "GLOB '+1" + "[0-9]" * 10 + "'" if dialect == "sqlite" else "~ '^\\+1[0-9]{10}$'"
    number = "INTEGER" if dialect == "sqlite" else "bigint"
    return (
        "CASE WHEN contacts.phone IS NULL THEN NULL "
        "WHEN EXISTS (SELECT 1 FROM suppressions d WHERE d.kind = 'do_not_call' AND d.value = contacts.phone) "
        "THEN 'requested' "
        f"WHEN contacts.phone {us} THEN (CASE WHEN EXISTS (SELECT 1 FROM dnc_area_codes a "
        "WHERE a.area_code = substr(contacts.phone, 3, 3) AND a.fresh) THEN (CASE WHEN EXISTS "
        f"(SELECT 1 FROM dnc_numbers n WHERE n.number = CAST(substr(contacts.phone, 3) AS {number})) "
        "THEN 'listed' ELSE 'clear' END) ELSE 'unknown' END) ELSE 'unknown' END"
    )


async def refresh_contacts(session: AsyncSession, area_code: str) -> int:
    """``contacts.phone_dnc`` of the area code's phones brought up to date; how many changed."""
    dialect = session.get_bind().dialect.name
    value = phone_dnc_sql(dialect)
    differs = "IS NOT" if dialect == "sqlite" else "IS DISTINCT FROM"
    low, high = f"+1{area_code}", f"+1{area_code}:"  # ':' sorts after every digit
    result = await session.execute(
        text(
            f"UPDATE contacts SET phone_dnc = {value} "
            f"WHERE phone >= :low AND phone < :high AND phone_dnc {differs} ({value})"
        ),
        {"low": low, "high": high},
    )
    return int(getattr(result, "rowcount", 0) or 0)


@dataclass
class ImportReport:
    mode: Mode
    version_date: date
    lines: int
    area_codes: list[dict[str, Any]] = field(default_factory=list)
    contacts_updated: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "version_date": self.version_date,
            "lines": self.lines,
            "area_codes": self.area_codes,
            "contacts_updated": self.contacts_updated,
        }


def _covered(found: DncFile, mode: Mode, declared: list[str] | None) -> list[str]:
    """The area codes this import brings to its version: a full list's own (or the declared ones,
    which may include codes with no number listed), a change list's own plus the declared ones."""
    own = found.area_codes()
    for code in declared or []:
        if len(code) != 3 or not code.isdigit() or code[0] in "01":
            raise DncFileError(f"{code!r} is not an area code (three digits, the first 2-9)")
    if mode == "full" and declared is not None:
        outside = sorted(own - set(declared))
        if outside:
            raise DncFileError(f"the file lists numbers of area codes not named in --area-codes: {', '.join(outside)}")
        return sorted(set(declared))
    return sorted(own | set(declared or []))


async def import_file(
    database: Database,
    path: Path,
    *,
    mode: Mode,
    version_date: date,
    area_codes: list[str] | None,
    now: datetime,
) -> ImportReport:
    """Imports a full list (each area code's numbers replaced by the file's) or a change list (its
    additions and deletions applied). Idempotent: the same file again changes nothing. Refused, with
    nothing written: a bad line, a delete mark in a full list, an unmarked line in a change list, a
    change list for an area code never fully imported, and data older than the area code holds.
    Each area code is its own transaction (a rerun finishes an interrupted import)."""
    found = read_file(path)
    if mode == "full" and any(found.deleted.values()):
        raise DncFileError("a full list has no delete marks: import it with --changes")
    if mode == "changes" and found.unmarked:
        raise DncFileError(f"{found.unmarked} lines have no add or delete mark: a full list is imported with --full")
    covered = _covered(found, mode, area_codes)
    if not covered:
        raise DncFileError("the file holds no number: name the area codes it covers with --area-codes")
    async with database.read_sessions() as session:
        held = {
            row.area_code: row
            for row in await session.scalars(select(DncAreaCode).where(DncAreaCode.area_code.in_(covered)))
        }
    if mode == "changes":
        missing = [code for code in covered if code not in held]
        if missing:
            raise DncFileError(f"no full list was imported for {', '.join(missing)}: import one with --full first")
    older = [code for code in covered if code in held and held[code].version_date > version_date]
    if older:
        raise DncFileError(f"the data held for {', '.join(older)} is newer than {version_date.isoformat()}")
    report = ImportReport(mode=mode, version_date=version_date, lines=found.lines)
    for code in covered:
        async with database.writer_turn(), database.write_sessions() as session, session.begin():
            numbers = await _apply(session, code, found, mode)
            row = held.get(code) or DncAreaCode(area_code=code)
            row.version_date, row.imported_at, row.numbers = version_date, now, numbers
            row.last_kind, row.fresh = mode, is_fresh(version_date, now.date())
            await session.merge(row)
            await session.flush()
            updated = await refresh_contacts(session, code)
            report.contacts_updated += updated
            report.area_codes.append(
                {"area_code": code, "numbers": numbers, "fresh": row.fresh, "contacts_updated": updated}
            )
            await audit.record(
                session,
                kind="dnc.imported",
                subject=f"area_code:{code}",
                now=now,
                mode=mode,
                version_date=version_date,
                numbers=numbers,
                added=len(found.added.get(code, ())),
                deleted=len(found.deleted.get(code, ())),
            )
    return report


async def _apply(session: AsyncSession, code: str, found: DncFile, mode: Mode) -> int:
    """The area code's numbers as the file leaves them; how many it holds then."""
    low = int(code) * AREA_SPAN
    in_area = (DncNumber.number >= low) & (DncNumber.number < low + AREA_SPAN)
    added = sorted(found.added.get(code, ()))
    if mode == "full":
        await session.execute(delete(DncNumber).where(in_area))
        for start in range(0, len(added), 50_000):
            await bulk.insert_rows(session, _NUMBERS, ("number",), [(n,) for n in added[start : start + 50_000]])
    else:
        for start in range(0, len(added), 500):
            part = added[start : start + 500]
            await session.execute(insert_unless_exists(session, DncNumber).values([{"number": n} for n in part]))
        gone = sorted(found.deleted.get(code, ()))
        for start in range(0, len(gone), 500):
            await session.execute(delete(DncNumber).where(DncNumber.number.in_(gone[start : start + 500])))
    return int(await session.scalar(select(func.count()).select_from(DncNumber).where(in_area)) or 0)


async def refresh_freshness(database: Database, *, now: datetime) -> list[str]:
    """Area codes whose data aged past 31 days: marked stale and their contacts' phones made unknown
    (the worker, each round). Returns them."""
    today = now.date()
    async with database.read_sessions() as session:
        rows = list(await session.scalars(select(DncAreaCode).where(DncAreaCode.fresh.is_(True))))
    stale = [row.area_code for row in rows if not is_fresh(row.version_date, today)]
    for code in stale:
        async with database.writer_turn(), database.write_sessions() as session, session.begin():
            await session.execute(update(DncAreaCode).where(DncAreaCode.area_code == code).values(fresh=False))
            updated = await refresh_contacts(session, code)
            await audit.record(session, kind="dnc.aged_out", subject=f"area_code:{code}", now=now, contacts=updated)
    return stale


async def area_codes(session: AsyncSession, *, now: datetime) -> list[dict[str, Any]]:
    """Each imported area code: its version, its age in days, whether it is current, its numbers."""
    today = now.date()
    rows = await session.scalars(select(DncAreaCode).order_by(DncAreaCode.area_code))
    return [
        {
            "area_code": row.area_code,
            "version_date": row.version_date,
            "age_days": (today - row.version_date).days,
            "fresh": is_fresh(row.version_date, today),
            "usable_until": row.version_date + timedelta(days=FRESH_DAYS),
            "numbers": row.numbers,
            "last_kind": row.last_kind,
            "imported_at": row.imported_at,
        }
        for row in rows
    ]
