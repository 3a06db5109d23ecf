"""One run of a source as its kind sees it: the source's configuration, the watermark, the fetcher,
the importers, and the report the run prints."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from itertools import islice
from pathlib import Path
from typing import Any

from sqlalchemy import update

from vpx.clock import Clock
from vpx.config import Settings
from vpx.contacts.search import backend_for
from vpx.contacts.search import postings as search_postings
from vpx.db import Database
from vpx.models import DataSource
from vpx.registries import importer
from vpx.registries.reader import ImportFailed, open_text
from vpx.registries.records import ImportSummary
from vpx.registries.sources import ImportContext, all_sources
from vpx.signals.events import SignalEvent
from vpx.signals.pipeline import BATCH_SIZE, IngestReport, ingest_events
from vpx.sources.fetch import Fetcher, SourceFailed
from vpx.sources.limits import Limits
from vpx.sources.unpack import check_lines, off_loop


@dataclass(frozen=True)
class SourceConfig:
    """A source as configured: secret options already opened (never print ``options`` whole)."""

    id: int
    name: str
    kind: str
    url: str
    every_seconds: int
    options: dict[str, str]
    mapping: str | None = None
    mapping_name: str | None = None


@dataclass
class FileReport:
    """What one fetched piece (a file, a page of records) did."""

    name: str
    url: str | None = None
    status: str = "applied"  # applied, not_modified, skipped
    note: str | None = None
    file_date: str | None = None
    rows_read: int = 0
    created: int = 0
    updated: int = 0
    deactivated: int = 0
    unchanged: int = 0
    ingested: int = 0
    duplicates: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def merge(self, other: FileReport) -> None:
        """Adds another piece's counts to this one's."""
        _add_counts(self, other)
        for reason, count in other.skipped.items():
            self.skipped[reason] = self.skipped.get(reason, 0) + count


@dataclass
class RunReport:
    """A run's report: ``vpx sources run --json`` prints it, ``last_run`` keeps it."""

    source: str
    kind: str
    status: str = "running"  # ok, not_modified, failed
    started_at: datetime | None = None
    finished_at: datetime | None = None
    requests: int = 0
    bytes_downloaded: int = 0
    rows_read: int = 0
    created: int = 0
    updated: int = 0
    deactivated: int = 0
    unchanged: int = 0
    ingested: int = 0
    duplicates: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    newest_record_at: datetime | None = None
    files: list[FileReport] = field(default_factory=list)
    error: dict[str, str] | None = None
    # When this run brought nothing new (or failed): the last run that did, summed up (APPLIED_KEYS),
    # so that a run right after the worker's says what that one did rather than only "not modified".
    last_applied: dict[str, Any] | None = None

    def add(self, piece: FileReport, *, into: FileReport | None = None) -> None:
        """Counts a piece; listed as a file of its own, or added to ``into`` (a listed piece that sums
        up many, such as the pages of one run of a permit portal)."""
        if into is None:
            self.files.append(piece)
        else:
            into.merge(piece)
        _add_counts(self, piece)
        self.skipped.update(piece.skipped)

    def as_dict(self) -> dict[str, Any]:
        seconds = None
        if self.started_at is not None and self.finished_at is not None:
            seconds = round((self.finished_at - self.started_at).total_seconds(), 3)
        return {
            "source": self.source,
            "kind": self.kind,
            "status": self.status,
            "started_at": _iso(self.started_at),
            "finished_at": _iso(self.finished_at),
            "seconds": seconds,
            "requests": self.requests,
            "bytes_downloaded": self.bytes_downloaded,
            "rows_read": self.rows_read,
            "created": self.created,
            "updated": self.updated,
            "deactivated": self.deactivated,
            "unchanged": self.unchanged,
            "ingested": self.ingested,
            "duplicates": self.duplicates,
            "skipped": dict(sorted(self.skipped.items())),
            "newest_record_at": _iso(self.newest_record_at),
            "files": [vars(piece) for piece in self.files],
            "error": self.error,
            "last_applied": self.last_applied,
        }


# What a run's report keeps of the last run that applied something (``RunReport.last_applied``).
APPLIED_KEYS = ("started_at", "finished_at", "rows_read", "created", "updated", "deactivated", "unchanged",
                "ingested", "duplicates", "newest_record_at")  # fmt: skip


def last_applied(previous: dict[str, Any] | None) -> dict[str, Any] | None:
    """The last run that applied something, as of a source's last run's report (``previous``): that
    run itself when it did, else what it kept of an earlier one; None when no run applied anything."""
    if not previous:
        return None
    if previous.get("status") == "ok":
        return {key: previous.get(key) for key in APPLIED_KEYS}
    kept = previous.get("last_applied")
    return dict(kept) if isinstance(kept, dict) else None


# The counts a piece and a run both keep, a run's being the sum of its pieces'.
COUNTS = ("rows_read", "created", "updated", "deactivated", "unchanged", "ingested", "duplicates")


def _add_counts(total: FileReport | RunReport, piece: FileReport) -> None:
    for name in COUNTS:
        setattr(total, name, getattr(total, name) + getattr(piece, name))


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


class LeaseLost(SourceFailed):
    def __init__(self, name: str) -> None:
        super().__init__(
            f"another process took over source {name} (this run outlived its lease); its run goes on",
            code="lease_lost",
        )


def day_start(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)


class Job:
    """What a kind's ``run`` works with (vpx.sources.kinds describes the protocol)."""

    def __init__(
        self,
        *,
        config: SourceConfig,
        watermark: dict[str, Any],
        fetcher: Fetcher,
        database: Database,
        settings: Settings,
        clock: Clock,
        owner: str,
        report: RunReport,
    ) -> None:
        self.config = config
        self.watermark = watermark
        self.fetcher = fetcher
        self.database = database
        self.settings = settings
        self.clock = clock
        self.owner = owner
        self.report = report
        self.workdir = Path(settings.data_dir) / "sources" / config.name

    @property
    def limits(self) -> Limits:
        """The source's limits (vpx.sources.limits)."""
        return self.fetcher.limits

    async def check_lines(self, path: Path) -> None:
        """SourceFailed (``line_too_long``) when a line of the file is longer than the source's
        ``max_line``: run on every text file before a reader takes it, off the event loop."""
        most = self.limits.max_line
        await off_loop(lambda stop: check_lines(path, most, stop=stop))

    def file(self, name: str) -> Path:
        """A path for a fetched file in this source's folder under the data directory."""
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "file"
        return self.workdir / safe[:200]

    def saw_record(self, when: datetime | date | None) -> None:
        """Notes a record's own date (a file's publication day, a permit's date): the newest is kept."""
        if when is None:
            return
        moment = when if isinstance(when, datetime) else day_start(when)
        if self.report.newest_record_at is None or moment > self.report.newest_record_at:
            self.report.newest_record_at = moment

    async def save(self, watermark: dict[str, Any]) -> None:
        """Commits the watermark, once the data it stands for is committed. LeaseLost when another
        process has taken the source over (this run outlived its lease)."""
        async with self.database.write_sessions() as session, session.begin():
            done = await session.execute(
                update(DataSource)
                .where(DataSource.id == self.config.id, DataSource.lease_owner == self.owner)
                .values(watermark=watermark, updated_at=self.clock.now())
            )
            if done.rowcount != 1:  # type: ignore[attr-defined]
                raise LeaseLost(self.config.name)
        self.watermark = watermark

    async def check_registry_layout(self, source: str, path: Path) -> None:
        """The registry importer's own checks of the file's header and layout, run on the file before
        anything is written: SourceFailed (code ``unexpected_layout``…) when it is not this registry's
        file, or not laid out as the importer knows it, or has a line longer than ``max_line``."""
        await self.check_lines(path)
        chosen = all_sources()[source]()
        ctx = ImportContext(
            summary=ImportSummary(source=source, path=str(path)),
            now=self.clock.now(),
            file_date=None,
            search=backend_for(self.database.dialect),
            dialect=self.database.dialect,
        )
        try:
            await chosen.before_import(self.database, ctx)

            def first_row() -> None:
                opened = open_text(path)
                try:
                    for _ in chosen.read(opened, ctx):
                        break  # the header and layout checks run before the first row is made
                finally:
                    opened.close()

            await asyncio.to_thread(first_row)
        except ImportFailed as exc:
            raise SourceFailed(_named(str(exc), path), code=exc.code) from None

    async def import_registry(
        self, source: str, path: Path, *, url: str | None = None, file_date: date | None = None
    ) -> FileReport:
        """The file through the registry importer (as `vpx import SOURCE FILE`), its layout checked
        first; its counts added to the report. SourceFailed when the importer fails or finds the file
        cut off (batches committed before stay; the next run reads the file again)."""
        await self.check_registry_layout(source, path)
        try:
            summary = await importer.run_import(
                self.database, all_sources()[source](), path, now=self.clock.now(), file_date=file_date
            )
        except ImportFailed as exc:
            raise SourceFailed(_named(str(exc), path), code=exc.code) from None
        piece = FileReport(
            name=path.name,
            url=url,
            file_date=summary.file_date,
            rows_read=summary.rows_read,
            created=summary.created,
            updated=summary.updated + summary.merged,
            deactivated=summary.deactivated,
            unchanged=summary.unchanged,
            skipped=dict(summary.skipped),
        )
        self.report.add(piece)
        if summary.error is not None:
            raise SourceFailed(summary.error["message"], code=summary.error["code"])
        if summary.file_date:
            self.saw_record(date.fromisoformat(summary.file_date))
        return piece

    async def ingest(
        self, events: Iterable[SignalEvent], *, name: str, url: str | None = None, into: FileReport | None = None
    ) -> FileReport:
        """Signal events through the ingestion pipeline (as `vpx signals import`): one transaction per
        batch, events already seen counted as duplicates; the newest event's date noted. With ``into``
        the counts are added to that piece of the report instead of listing a new one. The events are
        taken a batch at a time in a worker thread: reading a file into events never holds the event
        loop."""
        found = IngestReport()
        pending = iter(events)
        written = 0
        while batch := await asyncio.to_thread(_take, pending, BATCH_SIZE):
            for event in batch:
                self.saw_record(event.observed_at)
            found.add(
                await ingest_events(
                    self.database, batch, settings=self.settings, clock=self.clock, batches_before=written
                )
            )
            written += 1
        # Businesses the events named and the catalogue did not have are in the postings when the
        # run returns (searches exact whether or not a worker folds meanwhile).
        await search_postings.fold_backlog(self.database)
        piece = FileReport(
            name=name,
            url=url,
            created=found.ingested,
            ingested=found.ingested,
            duplicates=found.duplicates,
            skipped=found.skipped_reasons,
        )
        self.report.add(piece, into=into)
        return piece


def _take(events: Iterator[SignalEvent], count: int) -> list[SignalEvent]:
    return list(islice(events, count))


def _named(message: str, path: Path) -> str:
    """An importer's message, naming the file first (most already do)."""
    return message if message.startswith(path.name) else f"{path.name}: {message}"
