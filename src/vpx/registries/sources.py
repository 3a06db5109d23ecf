"""What every source is, and the list of them.

A source is one module: a ``Source`` subclass that reads its publisher's file into records (``read``,
run in a reader thread) and writes a batch of them (``write``, in one transaction), plus a
``@register`` on the class and the module's name in ``SOURCE_MODULES``. Contact registries subclass
``ContactSource`` and only read: matching, upsert, provenance and decision-makers are shared.
"""

from __future__ import annotations

import importlib
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.search import SearchBackend
from vpx.db import Database
from vpx.registries.matching import NAME_THRESHOLD
from vpx.registries.reader import OpenedFile, SkipRow
from vpx.registries.records import ImportSummary, Ready, row_terms
from vpx.registries.seen import SeenIds
from vpx.registries.upsert import BatchContext, write_contact_batch

# Every source module; importing one registers its sources.
SOURCE_MODULES = (
    "vpx.registries.nucc",
    "vpx.registries.nppes",
    "vpx.registries.cslb",
    "vpx.registries.edgar",
)

_DATE_IN_NAME = re.compile(r"(?<!\d)(20\d{2}|19\d{2})[-_]?(\d{2})[-_]?(\d{2})(?!\d)")


@dataclass
class ReadBatch:
    """What the reader hands the writer: records, the rows they came from, the rows skipped."""

    items: list[Any]
    rows: int
    skipped: list[tuple[str, str]]
    bytes_read: int
    terms: set[str] | None = None


@dataclass
class ImportContext:
    """One import run: the clock, the file's date, the summary, and room for a source's lookups."""

    summary: ImportSummary
    now: datetime
    file_date: date | None
    search: SearchBackend
    dialect: str
    threshold: float = NAME_THRESHOLD
    lookups: dict[str, Any] = field(default_factory=dict)
    bulk: bool = False  # loading in bulk: the contacts table is the import's alone
    written: SeenIds | None = None  # see BatchContext.written
    lock: threading.Lock = field(default_factory=threading.Lock)
    _batch: BatchContext | None = None

    def skip(self, reason: str, detail: str = "") -> None:
        with self.lock:
            self.summary.skip(reason, detail)

    def batch_context(self, registry: str) -> BatchContext:
        if self._batch is None:
            self._batch = BatchContext(
                registry=registry,
                file_date=self.file_date,
                now=self.now,
                search=self.search,
                summary=self.summary,
                threshold=self.threshold,
                table_locked=self.bulk,
                written=self.written,
            )
        return self._batch


class Source(ABC):
    name: ClassVar[str]  # the name on the command line: vpx import <name> FILE
    registry: ClassVar[str]  # the registry recorded as provenance
    title: ClassVar[str]

    async def before_import(self, database: Database, ctx: ImportContext) -> None:
        """Loads what ``read`` needs from the database into ``ctx.lookups`` (``read`` runs in a
        thread or a process of its own, without a database)."""
        return None

    @abstractmethod
    def read(self, opened: OpenedFile, ctx: ImportContext) -> Iterator[Any | SkipRow]:
        """The file's records, or SkipRow for rows that cannot become one. Raises ImportFailed for a
        file that is not this source's."""

    def read_ready(self, opened: OpenedFile, ctx: ImportContext) -> Iterator[Any | SkipRow]:
        """What the import's reader batches: ``read``'s items, or what the writer takes made of
        them (ContactSource)."""
        return self.read(opened, ctx)

    def ready(
        self, items: list[Any], ctx: ImportContext, rows: int, skipped: list[tuple[str, str]], bytes_read: int
    ) -> ReadBatch:
        """A batch as the reader hands it over; sources may do row-local work here, off the writer."""
        return ReadBatch(items=items, rows=rows, skipped=skipped, bytes_read=bytes_read)

    @abstractmethod
    async def write(self, session: AsyncSession, batch: ReadBatch, ctx: ImportContext) -> None:
        """Writes one batch (the caller commits)."""

    async def finish(self, database: Database, ctx: ImportContext) -> None:
        """Runs once after the last batch."""
        return None

    def file_date(self, path: Path) -> date | None:
        """The publication date: the last date in the file name (``npidata_pfile_20050523-20240211``),
        else the file's modification date."""
        found = _DATE_IN_NAME.findall(path.name)
        for year, month, day in reversed(found):
            try:
                return date(int(year), int(month), int(day))
            except ValueError:
                continue
        return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC).date()


class ContactSource(Source):
    """A registry whose records become contacts."""

    def read_ready(self, opened: OpenedFile, ctx: ImportContext) -> Iterator[Ready | SkipRow]:
        """The records as the writer takes them: contact rows, matching keys and digests are computed
        by the reader (``SourceRecord.ready``). A source may make them straight from its rows when
        that is faster (NPPES), as long as they are the same."""
        now = ctx.now
        for item in self.read(opened, ctx):
            yield item if isinstance(item, SkipRow) else item.ready(now)

    def ready(
        self, items: list[Any], ctx: ImportContext, rows: int, skipped: list[tuple[str, str]], bytes_read: int
    ) -> ReadBatch:
        # The batch's search words are computed by the reader too: on its own core.
        return ReadBatch(
            items=items,
            rows=rows,
            skipped=skipped,
            bytes_read=bytes_read,
            terms=row_terms([record.row for record in items if record.row is not None]),
        )

    async def write(self, session: AsyncSession, batch: ReadBatch, ctx: ImportContext) -> None:
        await write_contact_batch(session, batch.items, ctx.batch_context(self.registry), terms=batch.terms)

    async def finish(self, database: Database, ctx: ImportContext) -> None:
        from vpx.registries.companies import link_companies

        async with database.write_sessions() as session, session.begin():
            await link_companies(session, now=ctx.now)


S = TypeVar("S", bound=type[Source])
SOURCES: dict[str, type[Source]] = {}


def register(cls: S) -> S:
    SOURCES[cls.name] = cls
    return cls


def all_sources() -> dict[str, type[Source]]:
    for module in SOURCE_MODULES:
        importlib.import_module(module)
    return dict(sorted(SOURCES.items()))
