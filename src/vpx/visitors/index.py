"""The operator's address ranges: imported into the database (a source replaced at once), and held in
every process as one in-memory index (vpx.visitors.ranges), rebuilt when an import changes them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import cast

from sqlalchemy import delete, func, insert, select

from vpx.db import Database
from vpx.models import IpRange, IpRangeSource
from vpx.visitors.range_files import RangeRow
from vpx.visitors.ranges import Kind, Network, RangeIndex

CHUNK = 5000
LOAD_PAGE = 50_000


async def import_ranges(
    database: Database, *, source: str, format: str, rows: Iterable[RangeRow], now: datetime
) -> int:
    """Replaces the source's ranges with ``rows`` in one transaction (a lookup sees the old set or the
    new one, never half of each); returns how many went in."""
    count = 0
    async with database.writer_turn(), database.write_sessions() as session, session.begin():
        await session.execute(delete(IpRange).where(IpRange.source == source))
        existing = await session.get(IpRangeSource, source)
        if existing is None:
            session.add(IpRangeSource(name=source, format=format, ranges=0, imported_at=now))
            await session.flush()
        chunk: list[dict[str, object]] = []
        for row in rows:
            chunk.append(
                {
                    "source": source,
                    "family": row.family,
                    "first": str(row.start),
                    "last": str(row.end),
                    "kind": row.kind,
                    "domain": row.domain,
                    "contact_id": row.contact_id,
                    "organisation": (row.organisation or None) and row.organisation[:200],
                    "asn": row.asn,
                }
            )
            if len(chunk) >= CHUNK:
                await session.execute(insert(IpRange), chunk)
                count += len(chunk)
                chunk = []
        if chunk:
            await session.execute(insert(IpRange), chunk)
            count += len(chunk)
        source_row = await session.get(IpRangeSource, source)
        assert source_row is not None
        source_row.format, source_row.ranges, source_row.imported_at = format, count, now
    return count


async def sources(database: Database) -> list[IpRangeSource]:
    async with database.read_sessions() as session:
        return list(await session.scalars(select(IpRangeSource).order_by(IpRangeSource.name)))


class RangeStore:
    """This process's index of the imported ranges. ``index()`` checks, at most every
    ``check_seconds``, whether an import changed them (any process's), and rebuilds the index in a
    thread meanwhile serving the old one."""

    def __init__(
        self, database: Database, *, check_seconds: float = 5.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.database = database
        self.check_seconds = check_seconds
        self.clock = clock
        self._index = RangeIndex.build([])
        self._version: tuple[int, int, str] | None = None
        self._checked = -float("inf")
        self._lock = asyncio.Lock()

    async def index(self) -> RangeIndex:
        if self.clock() - self._checked >= self.check_seconds:
            await self.refresh()
        return self._index

    async def refresh(self, *, force: bool = False) -> None:
        """Rebuilds the index when the imported ranges changed (or ``force``)."""
        async with self._lock:
            self._checked = self.clock()
            version = await self._current_version()
            if version == self._version and not force:
                return
            ranges = await self._load()
            self._index = await asyncio.to_thread(RangeIndex.build, ranges)
            self._version = version

    async def _current_version(self) -> tuple[int, int, str]:
        async with self.database.read_sessions() as session:
            found = (
                await session.execute(
                    select(
                        func.count(),
                        func.coalesce(func.sum(IpRangeSource.ranges), 0),
                        func.max(IpRangeSource.imported_at),
                    )
                )
            ).one()
        return int(found[0]), int(found[1]), str(found[2])

    async def _load(self) -> list[tuple[int, int, int, Network]]:
        interned: dict[tuple[object, ...], Network] = {}
        loaded: list[tuple[int, int, int, Network]] = []
        # Read in pages by id: reads run in autocommit mode, where PostgreSQL has no server-side cursor.
        after = 0
        while True:
            query = (
                select(
                    IpRange.id,
                    IpRange.family,
                    IpRange.first,
                    IpRange.last,
                    IpRange.kind,
                    IpRange.source,
                    IpRange.domain,
                    IpRange.contact_id,
                    IpRange.organisation,
                    IpRange.asn,
                )
                .where(IpRange.id > after)
                .order_by(IpRange.id)
                .limit(LOAD_PAGE)
            )
            async with self.database.read_sessions() as session:
                rows = (await session.execute(query)).all()
            for row_id, family, first, last, kind, source, domain, contact_id, organisation, asn in rows:
                key = (kind, source, domain, contact_id, organisation, asn)
                network = interned.get(key)
                if network is None:
                    network = interned[key] = Network(cast(Kind, kind), source, domain, contact_id, organisation, asn)
                loaded.append((family, int(first), int(last), network))
                after = row_id
            if len(rows) < LOAD_PAGE:
                break
        return loaded
