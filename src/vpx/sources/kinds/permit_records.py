"""Permits that a portal answers as JSON records (a Socrata dataset's rows, an ArcGIS layer's feature
attributes): each record flattened to the ``column → text`` row that a permit mapping reads, field
names standing for columns, then fed page by page through the same permit reading as a CSV export.

Flattening: a number is written as JSON writes it (``18000``, ``1.5``; a float with no fraction
without its ``.0``), ``true``/``false`` for a boolean, an empty text for null; a nested object's
members are named with dots (``location.latitude``, ``location.human_address``) and a list's items by
their index (``location.coordinates.0``). A text is kept as it is, even one that holds JSON.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from vpx.signals.events import SignalEvent
from vpx.signals.sources import permits
from vpx.signals.sources.permit_mapping import MappingError, PermitMapping
from vpx.sources.fetch import SourceFailed
from vpx.sources.job import FileReport, Job

# Integral floats up to this size are written without a fraction (18000.0 -> "18000").
_EXACT_FLOAT = 2**53


def text_of(value: Any) -> str:
    """A JSON scalar as the text a CSV cell would hold."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < _EXACT_FLOAT:
            return str(int(value))
        return repr(value)
    return str(value)


def flatten(record: Mapping[str, Any]) -> dict[str, str]:
    """A JSON record as one row: nested members named with dots, list items by index."""
    row: dict[str, str] = {}

    def put(name: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for key, inner in value.items():
                put(f"{name}.{key}" if name else str(key), inner)
        elif isinstance(value, list):
            for index, inner in enumerate(value):
                put(f"{name}.{index}", inner)
        else:
            row[name] = text_of(value)

    put("", record)
    return row


async def flatten_all(records: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Every record flattened, in a worker thread (a page of many records is work)."""
    return await asyncio.to_thread(lambda: [flatten(r) for r in records])


def check_columns(mapping: PermitMapping, columns: Iterable[str], *, where: str) -> None:
    """Every column the mapping names is among ``columns`` (the fields the portal declares, and those
    the page's records carry); SourceFailed (``unexpected_layout``) naming the missing one, before
    anything of the page is written."""
    try:
        mapping.check_header(sorted(set(columns)))
    except MappingError as exc:
        raise SourceFailed(f"{where}: {exc}", code="unexpected_layout") from None


class PermitPages:
    """The permits of one run, page after page: each page's rows made into events by the permit
    mapping and ingested (one transaction per batch) before the caller saves the watermark that
    stands for the page; the counts summed up in one piece of the run's report."""

    def __init__(self, job: Job, mapping: PermitMapping, *, name: str, url: str) -> None:
        self.job = job
        self.mapping = mapping
        self.reading = permits.PermitReading()
        self.piece = FileReport(name=name, url=url)
        self.line = 0
        job.report.files.append(self.piece)

    async def ingest(self, rows: list[dict[str, str]]) -> None:
        skipped: list[permits.PermitSkip] = []
        events = await asyncio.to_thread(self._events, rows, skipped)  # a page of 50,000 rows is work
        await self.job.ingest(events, name=self.piece.name, url=self.piece.url, into=self.piece)
        self.piece.rows_read += len(rows)
        self.job.report.rows_read += len(rows)
        for item in skipped:
            self.piece.skipped[item.reason] = self.piece.skipped.get(item.reason, 0) + 1
            self.job.report.skipped[item.reason] += 1

    def _events(self, rows: list[dict[str, str]], skipped: list[permits.PermitSkip]) -> list[SignalEvent]:
        events = []
        for row in rows:
            self.line += 1
            self.reading.rows_read += 1
            # The CSV import's own rules, row for row (a permit is warm, D20; placeholders skipped).
            event = permits._event(row, self.mapping, self.line, skipped, self.reading)
            if event is not None:
                events.append(event)
        return events

    def finish(self) -> None:
        """A run that read nothing new lists its piece as not modified."""
        if self.piece.rows_read == 0:
            self.piece.status = "not_modified"


def page_size_check(most: int) -> Callable[[str], str]:
    """The check of a portal's ``page_size`` option: a whole number from 1 to ``most``."""

    def check(value: str) -> str:
        text = value.strip().replace(",", "").replace("_", "")
        if not text.isdigit() or not 1 <= int(text) <= most:
            raise ValueError(f"must be a whole number from 1 to {most:,}")
        return str(int(text))

    return check
