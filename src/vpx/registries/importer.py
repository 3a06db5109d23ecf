"""Running an import: a reader parses and normalises the file into batches while the event loop
writes the previous batch, each batch in its own transaction.

The reader is a thread for small files and a process of its own for large ones (from
``PROCESS_READER_BYTES``), so that parsing and normalising run on another core than the writes.
Memory stays constant whatever the file size: a bounded queue holds a few batches at most. A batch
is all or nothing, so an import stopped half-way (a killed process, a lost connection) leaves every
contact complete with its sources and people; running it again upserts what was written and goes on.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import multiprocessing
import queue
import threading
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.search import backend_for
from vpx.contacts.search import postings as search_postings
from vpx.db import Database
from vpx.registries import load_modes
from vpx.registries.reader import SNIFF_BYTES, ImportFailed, SkipRow, open_text
from vpx.registries.records import ImportSummary
from vpx.registries.seen import SeenIds
from vpx.registries.sources import ContactSource, ImportContext, ReadBatch, Source, all_sources

log = logging.getLogger(__name__)
DEFAULT_BATCH = 5000
PROCESS_READER_BYTES = 32 * 1024 * 1024
QUEUE_DEPTH = 3


@dataclass(frozen=True)
class Progress:
    bytes_read: int
    bytes_total: int
    rows: int


ProgressCallback = Callable[[Progress], None]
Put = Callable[[tuple[Any, ...]], bool]


def read_batches(
    source: Source, path: Path, ctx: ImportContext, *, batch_size: int, limit: int | None, put: Put
) -> None:
    """Reads the file and puts ("start", encoding, size), then ("batch", ReadBatch) …, then ("done",
    truncated) or ("error", code, message). Stops early when ``put`` returns False."""
    try:
        opened = open_text(path)
    except ImportFailed as exc:
        put(("error", exc.code, str(exc)))
        return
    try:
        if not put(("start", opened.encoding, opened.size)):
            return
        items: list[Any] = []
        skipped: list[tuple[str, str]] = []
        rows = total = 0
        truncated = False
        for item in source.read_ready(opened, ctx):
            if limit is not None and total >= limit:
                break
            rows += 1
            total += 1
            if isinstance(item, SkipRow):
                truncated = truncated or item.reason == "truncated_row"
                skipped.append((item.reason, item.detail))
                continue
            items.append(item)
            if len(items) >= batch_size:
                if not put(("batch", source.ready(items, ctx, rows, skipped, opened.consumed))):
                    return
                items, skipped, rows = [], [], 0
        if (items or skipped or rows) and not put(("batch", source.ready(items, ctx, rows, skipped, opened.size))):
            return
        put(("done", truncated))
    except ImportFailed as exc:
        put(("error", exc.code, str(exc)))
    except Exception:
        put(("error", "reader_failed", traceback.format_exc(limit=8)))
    finally:
        opened.close()


def _process_reader(
    source_name: str,
    path: Path,
    lookups: dict[str, Any],
    context: tuple[datetime, date | None, str],
    batch_size: int,
    limit: int | None,
    out: Any,
) -> None:
    """The reader in a process of its own (its arguments and messages are pickled)."""
    quiet_collector()
    now, file_date, dialect = context
    source = all_sources()[source_name]()
    ctx = ImportContext(
        summary=ImportSummary(source=source_name, path=str(path)),
        now=now,
        file_date=file_date,
        search=backend_for(dialect),
        dialect=dialect,
        lookups=lookups,
    )

    def put(message: tuple[Any, ...]) -> bool:
        out.put(message)
        collect_now()
        return True

    read_batches(source, path, ctx, batch_size=batch_size, limit=limit, put=put)


def quiet_collector() -> None:
    """The reader process's garbage collector runs every COLLECT_EVERY batches instead of every 700
    allocations: a row makes a dozen short-lived containers, and the automatic collections took a
    sixth of the reader's time (docs/benchmarks.md); once a batch still took a twelfth. Records hold
    no cycles; the occasional collection of the young generations frees any other."""
    gc.freeze()
    gc.disable()


COLLECT_EVERY = 20
_batches_put = 0


def collect_now() -> None:
    """Called after each batch the reader process hands over (see quiet_collector)."""
    global _batches_put
    _batches_put += 1
    if _batches_put % COLLECT_EVERY == 0:
        gc.collect(1)


class _Reader:
    """A reader thread or process and the bounded queue it fills."""

    def __init__(
        self, source: Source, path: Path, ctx: ImportContext, *, batch_size: int, limit: int | None, process: bool
    ) -> None:
        self.stop = threading.Event()
        self.worker: threading.Thread | multiprocessing.process.BaseProcess
        if process:
            mp = multiprocessing.get_context("spawn")
            self.messages: Any = mp.Queue(maxsize=QUEUE_DEPTH)
            self.worker = mp.Process(
                target=_process_reader,
                args=(
                    source.name,
                    path,
                    ctx.lookups,
                    (ctx.now, ctx.file_date, ctx.dialect),
                    batch_size,
                    limit,
                    self.messages,
                ),
                daemon=True,
                name=f"vpx-import-{source.name}",
            )
        else:
            self.messages = queue.Queue(maxsize=QUEUE_DEPTH)

            def put(message: tuple[Any, ...]) -> bool:
                while not self.stop.is_set():
                    try:
                        self.messages.put(message, timeout=0.2)
                        return True
                    except queue.Full:
                        continue
                return False

            self.worker = threading.Thread(
                target=read_batches,
                args=(source, path, ctx),
                kwargs={"batch_size": batch_size, "limit": limit, "put": put},
                daemon=True,
                name=f"vpx-import-{source.name}",
            )
        self.worker.start()

    def get(self) -> tuple[Any, ...]:
        while True:
            try:
                message: tuple[Any, ...] = self.messages.get(timeout=0.5)
                return message
            except queue.Empty:
                if not self.worker.is_alive():
                    return ("error", "reader_failed", "the reader stopped without finishing the file")

    def close(self) -> None:
        self.stop.set()
        if isinstance(self.worker, threading.Thread):
            self.worker.join()
            return
        if self.worker.is_alive():
            self.worker.terminate()
        self.worker.join()


async def run_import(
    database: Database,
    source: Source,
    path: Path,
    *,
    now: datetime,
    limit: int | None = None,
    file_date: date | None = None,
    batch_size: int = DEFAULT_BATCH,
    progress: ProgressCallback | None = None,
    reader: str = "auto",
    mode: str = load_modes.AUTO,
) -> ImportSummary:
    """Imports one file; returns the summary. Raises ImportFailed for a file that cannot be imported
    (nothing is written after that point; in batches, batches committed before it stay; in bulk,
    nothing stays). ``reader`` is ``thread``, ``process`` or ``auto`` (a process for files from
    PROCESS_READER_BYTES on); ``mode`` is ``batches``, ``bulk`` or ``auto`` (vpx.registries.load_modes)."""
    if mode not in load_modes.MODES:
        raise ValueError(f"mode must be one of {', '.join(load_modes.MODES)}")
    if not await asyncio.to_thread(path.is_file):
        raise ImportFailed(f"no such file: {path}", code="file_not_found")
    size = (await asyncio.to_thread(path.stat)).st_size
    summary = ImportSummary(source=source.name, path=str(path))
    ctx = ImportContext(
        summary=summary,
        now=now,
        file_date=file_date or source.file_date(path),
        search=backend_for(database.dialect),
        dialect=database.dialect,
    )
    summary.file_date = ctx.file_date.isoformat() if ctx.file_date else None
    started = time.perf_counter()
    await source.before_import(database, ctx)
    rows = load_modes.estimated_rows(size, await asyncio.to_thread(_head, path))
    chosen = await load_modes.choose(
        database, requested=mode, contacts=isinstance(source, ContactSource), rows=min(rows, limit or rows)
    )
    use_process = reader == "process" or (reader == "auto" and size >= PROCESS_READER_BYTES)

    def start_reader() -> _Reader:
        return _Reader(source, path, ctx, batch_size=batch_size, limit=limit, process=use_process)

    truncated: bool | None = None
    if chosen == load_modes.BULK:
        truncated = await _load_in_bulk(database, source, ctx, start_reader, size, progress, rows)
        summary.mode = load_modes.BULK if truncated is not None else load_modes.BATCHES
    if truncated is None:
        summary.mode = load_modes.BATCHES

        async def write(batch: ReadBatch) -> None:
            async with database.write_sessions() as session, session.begin():
                await _commit_lightly(session)
                await source.write(session, batch, ctx)
            # Searches stay exact while the import runs: it folds what it wrote once a search would
            # no longer apply it all (the worker folds the rest sooner, when it runs).
            await search_postings.fold_backlog(database, above=search_postings.PENDING_APPLIED // 2)

        truncated = await _consume(start_reader(), write, summary, size, progress)
    await source.finish(database, ctx)
    # Everything the import wrote is in the postings when it returns.
    await search_postings.fold_backlog(database)
    summary.seconds = time.perf_counter() - started
    if truncated:
        summary.complete = False
        summary.error = {
            "code": "truncated_file",
            "message": f"{path.name} ends inside a row: the file looks cut off. Every complete row before "
            "it was imported; import the whole file again to finish (records already written are updated, "
            "not duplicated).",
        }
    return summary


def _head(path: Path) -> bytes:
    with path.open("rb") as handle:
        return handle.read(SNIFF_BYTES)


async def _commit_lightly(session: AsyncSession) -> None:
    """PostgreSQL: the import's commits do not wait for the WAL to reach the disk. A crash may lose
    the last few batches — never part of one — and running the import again writes them."""
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SET LOCAL synchronous_commit = off"))


async def _consume(
    worker: _Reader,
    write: Callable[[ReadBatch], Awaitable[None]],
    summary: ImportSummary,
    size: int,
    progress: ProgressCallback | None,
) -> bool:
    """Writes the reader's batches as they come; returns whether the file was cut off. The next
    message is taken off the queue (unpickled, for a reader process) while a batch is written: the
    writer waits on the database for most of a batch, and the unpickling then fills that wait."""
    upcoming = asyncio.ensure_future(asyncio.to_thread(worker.get))
    try:
        while True:
            message = await upcoming
            kind = message[0]
            if kind in ("start", "batch"):
                upcoming = asyncio.ensure_future(asyncio.to_thread(worker.get))
            if kind == "start":
                summary.encoding = message[1]
            elif kind == "batch":
                batch: ReadBatch = message[1]
                summary.rows_read += batch.rows
                for reason, detail in batch.skipped:
                    summary.skip(reason, detail)
                if batch.items:
                    await write(batch)
                if progress is not None:
                    progress(Progress(batch.bytes_read, size, summary.rows_read))
            elif kind == "done":
                return bool(message[1])
            else:
                raise ImportFailed(message[2], code=message[1])
    finally:
        await asyncio.to_thread(worker.close)
        # A get still waiting returns within its half-second poll once the reader has stopped.
        await asyncio.wait([upcoming])
        if not upcoming.cancelled():
            upcoming.exception()  # retrieved: a failure after the import ended says nothing new


async def _load_in_bulk(
    database: Database,
    source: Source,
    ctx: ImportContext,
    start_reader: Callable[[], _Reader],
    size: int,
    progress: ProgressCallback | None,
    expected_rows: int,
) -> bool | None:
    """The whole file in one transaction, the search indexes set aside and rebuilt before it commits.
    Returns whether the file was cut off, or None when the contacts table could not be locked in
    time (nothing was done: the caller loads in batches)."""
    try:
        async with database.write_sessions() as session, session.begin():
            await _commit_lightly(session)
            aside = await load_modes.set_aside(session)
            ctx.bulk = True
            registry = source.registry
            known = await session.execute(
                text("SELECT 1 FROM registry_records WHERE registry = :registry LIMIT 1"), {"registry": registry}
            )
            if known.first() is None:
                ctx.written = SeenIds(expected_rows)

            async def write(batch: ReadBatch) -> None:
                await source.write(session, batch, ctx)

            truncated = await _consume(start_reader(), write, ctx.summary, size, progress)
            await load_modes.restore(session, aside)
    except load_modes.LockBusy:
        log.warning("registry import: the contacts table stayed locked; loading in batches instead")
        return None
    return truncated
