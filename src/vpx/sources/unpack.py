"""Opening what publishers ship, within the source's limits (vpx.sources.limits): one member of a zip
archive streamed to disk (the CRC checked as it goes; refused before a byte is written when it says
it unzips past ``max_unpacked`` or ``max_ratio`` times its zipped size, and never written past what it
says), the rows of a spreadsheet (.xlsx) read with the standard library, row by row, and a text
file's lines measured against ``max_line`` before any reader takes a line whole. This is slow work
on large files: run it with ``off_loop``, which a run past its time stops cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import zipfile
import zlib
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import IO, TypeVar
from xml.etree.ElementTree import iterparse

from vpx.sources.failures import SourceFailed
from vpx.sources.limits import Limits, human_size

CHUNK = 4 * 1024 * 1024
# A member that unzips to less than this is never refused for its ratio (a small file of spaces
# compresses a thousandfold and harms nobody).
RATIO_FLOOR = 1024 * 1024
T = TypeVar("T")
_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"


def members(archive: Path) -> list[str]:
    try:
        with zipfile.ZipFile(archive) as opened:
            return opened.namelist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceFailed(f"{archive.name} is not a readable zip archive ({exc})", code="unexpected_layout") from None


class Stopped(Exception):
    """Work in a thread given up because the run awaiting it was stopped (``off_loop``)."""


async def off_loop(work: Callable[[threading.Event], T]) -> T:
    """``work(stop)`` in a worker thread. When the run is cancelled (past its time, or the process
    stopping) ``stop`` is set and the thread awaited, so that work which checks it between chunks
    ends and removes what it was writing before the cancellation goes on."""
    stop = threading.Event()
    running = asyncio.ensure_future(asyncio.to_thread(work, stop))
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        stop.set()
        with contextlib.suppress(Exception):
            await running
        raise


def extract(
    archive: Path,
    pattern: str,
    folder: Path,
    *,
    limits: Limits,
    exclude: str | None = None,
    stop: threading.Event | None = None,
) -> Path:
    """The one member whose name matches ``pattern`` (a regular expression, case-insensitive; not
    ``exclude``), written to ``folder``. SourceFailed when there is none, or more than one, or when
    it would unzip past the source's limits (nothing of it is left on disk)."""
    names = members(archive)
    wanted = re.compile(pattern, re.IGNORECASE)
    unwanted = re.compile(exclude, re.IGNORECASE) if exclude else None
    found = [
        n
        for n in names
        if wanted.search(n.rsplit("/", 1)[-1]) and not (unwanted and unwanted.search(n.rsplit("/", 1)[-1]))
    ]
    if len(found) != 1:
        listed = ", ".join(names[:20]) + (" …" if len(names) > 20 else "")
        what = "no file" if not found else f"{len(found)} files"
        raise SourceFailed(
            f"{archive.name} holds {what} like {pattern!r} (it holds: {listed or 'nothing'}); has the publisher "
            "changed how it packs its files?",
            code="unexpected_layout",
        )
    target = folder / found[0].rsplit("/", 1)[-1]
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with zipfile.ZipFile(archive) as opened:
            source = _open_member(opened, archive, found[0], limits)
            with source, target.open("wb") as out:
                while chunk := source.read(CHUNK):
                    if stop is not None and stop.is_set():
                        raise Stopped
                    out.write(chunk)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, RuntimeError, NotImplementedError) as exc:
        target.unlink(missing_ok=True)
        raise SourceFailed(f"{archive.name}: {found[0]} cannot be unpacked ({exc})", code="unexpected_layout") from None
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return target


class _Bounded:
    """A zip member read no further than the size it declares (checked against the limits first)."""

    def __init__(self, raw: IO[bytes], *, name: str, declared: int) -> None:
        self.raw, self.name, self.left = raw, name, declared

    def read(self, size: int = CHUNK) -> bytes:
        chunk = self.raw.read(size)
        self.left -= len(chunk)
        if self.left < 0:
            raise SourceFailed(
                f"{self.name} unzips to more than the size its archive declares; the archive is refused",
                code="unpacked_too_large",
            )
        return chunk

    def __enter__(self) -> _Bounded:
        return self

    def __exit__(self, *exc: object) -> None:
        self.raw.close()


def _open_member(book: zipfile.ZipFile, archive: Path, name: str, limits: Limits) -> _Bounded:
    """A member opened for reading once what it declares is within the limits: at most
    ``max_unpacked``, and at most ``max_ratio`` times its zipped size (which cannot be more than the
    whole archive, whatever the member says) unless under RATIO_FLOOR."""
    info = book.getinfo(name)
    packed = max(min(info.compress_size, archive.stat().st_size), 1)
    if info.file_size > limits.max_unpacked:
        raise SourceFailed(
            f"{archive.name}: {name} unzips to {human_size(info.file_size)}, more than this source unzips "
            f"({limits.describe('max_unpacked')})",
            code="unpacked_too_large",
        )
    if info.file_size > max(limits.max_ratio * packed, RATIO_FLOOR):
        raise SourceFailed(
            f"{archive.name}: {name} unzips to {info.file_size // packed} times its zipped size "
            f"({human_size(info.file_size)} from {human_size(packed)}), more than this source allows "
            f"({limits.describe('max_ratio')}); such an archive is refused as a zip bomb",
            code="compression_ratio",
        )
    return _Bounded(book.open(info), name=f"{archive.name}: {name}", declared=info.file_size)


def check_lines(path: Path, most: int, *, stop: threading.Event | None = None) -> None:
    """SourceFailed (``line_too_long``) when a line of the file is longer than ``most`` bytes. The file
    is read in chunks, so that a line is never held whole, nor a field on one line."""
    lines = 0  # line ends before this chunk
    held = 0  # bytes of the line the last chunk ended in
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            if stop is not None and stop.is_set():
                raise Stopped
            pieces = chunk.replace(b"\r", b"\n").split(b"\n")  # a line ends with LF, CR LF or CR
            lengths = [held + len(pieces[0]), *map(len, pieces[1:])]
            if max(lengths) > most:
                first = next(i for i, n in enumerate(lengths) if n > most)
                before = chunk[: sum(map(len, pieces[:first])) + first]
                raise _too_long(path, lines + before.count(b"\n") + 1, most)
            lines += chunk.count(b"\n")
            held = lengths[-1]


def _too_long(path: Path, line: int, most: int) -> SourceFailed:
    return SourceFailed(
        f"{path.name}: line {line:,} is longer than {human_size(most)}, the longest line this source reads "
        "(max_line); it was not read",
        code="line_too_long",
    )


def xlsx_rows(path: Path, limits: Limits) -> Iterator[list[str]]:
    """The first worksheet's rows as text cells (empty cells as ""); numbers as written, dates left
    as Excel's day numbers (``excel_day``). Its parts are unzipped within ``limits``."""
    try:
        book = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceFailed(f"{path.name} is not a spreadsheet (.xlsx) ({exc})", code="unexpected_layout") from None
    with book:
        strings = _shared_strings(book, path, limits)
        sheet = _first_sheet(book, path, limits)
        with _open_member(book, path, sheet, limits) as handle:
            row: dict[int, str] = {}
            cell_ref, cell_type, value = "", "", ""
            inline: list[str] = []
            for event, element in iterparse(handle, events=("start", "end")):
                tag = element.tag
                if event == "start":
                    if tag == f"{_NS}row":
                        row = {}
                    elif tag == f"{_NS}c":
                        cell_ref, cell_type, value, inline = element.get("r", ""), element.get("t", ""), "", []
                    continue
                if tag == f"{_NS}v":
                    value = element.text or ""
                elif tag == f"{_NS}t" and cell_type == "inlineStr":
                    inline.append(element.text or "")
                elif tag == f"{_NS}c":
                    if cell_type == "s" and value.isdigit():
                        text = strings[int(value)] if int(value) < len(strings) else ""
                    elif cell_type == "inlineStr":
                        text = "".join(inline)
                    else:
                        text = value
                    row[_column(cell_ref, len(row))] = text
                    element.clear()
                elif tag == f"{_NS}row":
                    width = max(row, default=-1) + 1
                    yield [row.get(i, "") for i in range(width)]
                    element.clear()


def excel_day(text: str) -> date | None:
    """An Excel date cell's day number (days since 1899-12-30) as a date."""
    try:
        number = float(text)
    except ValueError:
        return None
    if not 1 <= number < 2_958_466:
        return None
    return date(1899, 12, 30) + timedelta(days=int(number))


def _column(ref: str, fallback: int) -> int:
    letters = "".join(ch for ch in ref if ch.isalpha()).upper()
    if not letters:
        return fallback
    number = 0
    for ch in letters:
        number = number * 26 + (ord(ch) - 64)
    return number - 1


def _shared_strings(book: zipfile.ZipFile, path: Path, limits: Limits) -> list[str]:
    if "xl/sharedStrings.xml" not in book.namelist():
        return []
    strings: list[str] = []
    parts: list[str] = []
    with _open_member(book, path, "xl/sharedStrings.xml", limits) as handle:
        for _event, element in iterparse(handle, events=("end",)):
            if element.tag == f"{_NS}t":
                parts.append(element.text or "")
            elif element.tag == f"{_NS}si":
                strings.append("".join(parts))
                parts = []
                element.clear()
    return strings


def _first_sheet(book: zipfile.ZipFile, path: Path, limits: Limits) -> str:
    """The first worksheet named by the workbook (through its relationships), else sheet1.xml."""
    names = book.namelist()
    try:
        with _open_member(book, path, "xl/workbook.xml", limits) as handle:
            first = next(
                (el.get(f"{_REL_NS}id") for _, el in iterparse(handle, events=("end",)) if el.tag == f"{_NS}sheet"),
                None,
            )
        with _open_member(book, path, "xl/_rels/workbook.xml.rels", limits) as handle:
            for _, element in iterparse(handle, events=("end",)):
                if element.get("Id") == first and element.get("Target"):
                    target = element.get("Target", "").lstrip("/")
                    sheet = target if target.startswith("xl/") else f"xl/{target}"
                    if sheet in names:
                        return sheet
    except KeyError:
        pass
    sheets = sorted(n for n in names if re.fullmatch(r"xl/worksheets/sheet\d+\.xml", n))
    if not sheets:
        raise SourceFailed("the spreadsheet has no worksheet", code="unexpected_layout")
    return sheets[0]
