"""Reading published registry files in constant memory: encoding detection, CSV by header name, a
byte count for progress, and the difference between a bad row (skipped) and a broken file (an error).

Publishers' files come as UTF-8, UTF-8 with a BOM, or Windows-1252 (the NUCC code set); the encoding is
decided from the first 64 KiB, and a stray Windows-1252 byte later in a UTF-8 file is decoded as
Windows-1252 instead of failing the import.
"""

from __future__ import annotations

import codecs
import csv
import io
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NamedTuple, TypeVar, cast

SNIFF_BYTES = 64 * 1024
T = TypeVar("T")
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


class ImportFailed(Exception):
    """The file cannot be imported at all (unreadable, not the expected format); nothing was written
    after this point. ``code`` is a stable snake_case string for ``--json`` output."""

    def __init__(self, message: str, *, code: str = "unreadable_file") -> None:
        super().__init__(message)
        self.code = code


class SkipRow(Exception):
    """A row that cannot become a record; it is counted under ``reason`` and the import goes on."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(detail or reason)
        self.reason = reason
        self.detail = detail


def _fallback(error: UnicodeError) -> tuple[str, int]:
    # A byte that is not UTF-8 in a file detected as UTF-8: read it as Windows-1252 (or Latin-1 for
    # the five bytes Windows-1252 leaves undefined).
    assert isinstance(error, UnicodeDecodeError)
    chunk = error.object[error.start : error.end]
    return "".join(bytes([b]).decode("cp1252", errors="replace").replace("\ufffd", chr(b)) for b in chunk), error.end


codecs.register_error("vpx_cp1252_fallback", _fallback)


def detect_encoding(head: bytes) -> str:
    """``utf-8-sig`` when there is a BOM, ``utf-8`` when the sample decodes as UTF-8, else ``cp1252``."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    try:
        # The sample may end inside a multi-byte character.
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError:
        return "cp1252"
    return "utf-8"


class CountingReader(io.RawIOBase):
    """A binary file that counts the bytes read from it, for the progress bar."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.consumed = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = self.raw.readinto(buffer)  # type: ignore[attr-defined]
        self.consumed += count or 0
        return int(count or 0)

    def close(self) -> None:
        self.raw.close()
        super().close()


@dataclass
class OpenedFile:
    path: Path
    size: int
    encoding: str
    head: bytes  # the first 64 KiB, for sources that tell formats apart by content

    @property
    def first_line_quoted(self) -> bool:
        first = self.head.removeprefix(codecs.BOM_UTF8).split(b"\n", 1)[0].rstrip(b"\r")
        return len(first) > 2 and first.startswith(b'"') and first.endswith(b'"') and b'","' in first

    counter: CountingReader
    text: io.TextIOWrapper

    @property
    def consumed(self) -> int:
        return self.counter.consumed

    def close(self) -> None:
        self.text.close()


def open_text(path: Path, *, encoding: str | None = None) -> OpenedFile:
    """Opens a published file for streaming text reads, in ``encoding`` or the one detected."""
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise ImportFailed(f"cannot open {path}: {exc.strerror or exc}", code="unreadable_file") from exc
    head = raw.read(SNIFF_BYTES)
    raw.seek(0)
    if b"\x00" in head and not head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raw.close()
        raise ImportFailed(f"{path} is not a text file (it contains NUL bytes)", code="not_text")
    detected = encoding is None
    encoding = encoding or detect_encoding(head)
    counter = CountingReader(raw)
    errors = "vpx_cp1252_fallback" if detected and encoding.startswith("utf-8") else "strict"
    text = io.TextIOWrapper(io.BufferedReader(counter, 1 << 20), encoding=encoding, errors=errors, newline="")
    return OpenedFile(path=path, size=path.stat().st_size, encoding=encoding, head=head, counter=counter, text=text)


class CsvRow(NamedTuple):
    line: int
    values: list[str]


class CsvTable:
    """Rows of a CSV file with the positions of its columns by (stripped) header name.

    A row with fewer fields than the header is ``short``: in the middle of a file it is a malformed
    row; as the last row it means the file was cut off (``truncated``).
    """

    def __init__(self, opened: OpenedFile, *, default_header: Sequence[str] | None = None, marker: str = "") -> None:
        """The first row is the header; or, when ``default_header`` is given and the first row has no
        ``marker`` column, the first row is data laid out as ``default_header`` (headerless exports)."""
        self.opened = opened
        self._reader = csv.reader(opened.text, strict=False)
        self.truncated = False
        try:
            first = next(self._reader)
        except StopIteration:
            raise ImportFailed(f"{opened.path.name} is empty", code="empty_file") from None
        except csv.Error as exc:
            raise ImportFailed(f"{opened.path.name}: unreadable first row ({exc})", code="unreadable_file") from exc
        names = [name.strip().lstrip("\ufeff") for name in first]
        self._first_data: CsvRow | None = None
        if default_header is not None and marker not in names:
            if len(first) < len(default_header):
                raise ImportFailed(
                    f"{opened.path.name}: no {marker!r} header, and the first row has {len(first)} fields where "
                    f"the headerless layout has {len(default_header)}; is this the right file for this source?",
                    code="unexpected_layout",
                )
            self.header = list(default_header)
            self._first_data = CsvRow(1, first)
        else:
            self.header = names
        self.index = {name: position for position, name in enumerate(self.header)}
        self.width = len(self.header)
        # Every field of the header line in double quotes (NPPES): rows can take the fast path.
        self.quoted = self._first_data is None and opened.first_line_quoted
        self.needed = self.width
        self.pad = False

    def only_up_to(self, needed: int, *, pad: bool = False) -> None:
        """Rows may stop after the first ``needed`` fields (the rest is not read): a reader that uses
        a few of NPPES's 329 columns need not split them all. ``pad``: each row's values get an
        empty string appended, which a column missing from a layout can read as (position -1)."""
        self.needed = min(max(needed, 1), self.width)
        self.pad = pad

    def position(self, *names: str) -> int | None:
        """The position of the first of these header names present (old and new layouts)."""
        for name in names:
            if name in self.index:
                return self.index[name]
        return None

    def require(self, *names: str) -> int:
        found = self.position(*names)
        if found is None:
            raise ImportFailed(
                f"{self.opened.path.name}: no column {' or '.join(repr(n) for n in names)} in the header; "
                "is this the right file for this source?",
                code="unexpected_layout",
            )
        return found

    def records(self, make: Callable[[list[str]], T]) -> Iterator[T | SkipRow]:
        """``make`` of each row's values, or a SkipRow: for a row the CSV reader cannot make sense of,
        or one ``make`` refuses by raising SkipRow (its detail then starts with the line number)."""
        if self.quoted and self._first_data is None:
            yield from cast(Iterator[T | SkipRow], self._quoted_rows(make))
            return
        pad = self.pad
        for row in self.rows():
            if isinstance(row, SkipRow):
                yield row
                continue
            if pad:
                row.values.append("")
            try:
                yield make(row.values)
            except SkipRow as skip:
                yield SkipRow(skip.reason, f"line {row.line}: {skip.detail}")

    def _quoted_rows(self, make: Callable[[list[str]], T] | None) -> Iterator[T | CsvRow | SkipRow]:
        # No field of a line with exactly two quotes per field can hold a quote, so none holds a
        # '","' or a line break: splitting is exact. Other lines (embedded quotes, line breaks
        # inside a field, a cut-off last line) go through the csv module. A row is handed on when
        # the next one has been read: the last row of a file may be cut off (truncated). Rows go to
        # ``make`` here, in the loop, rather than through one more generator: this loop runs nine
        # million times for the full NPPES file.
        text = self.opened.text
        fields, needed, pad = self.width, self.needed, self.pad
        least = min(self.width, self.needed + 1)  # fewer fields: a malformed row (_checked)
        line_number = 1
        pending: list[str] | None = None
        pending_line = 0
        for raw in text:
            line_number += 1
            line = raw.rstrip("\r\n")
            if not line:
                continue
            values = _split_quoted(line, fields, needed)
            if values is None:
                buffered = raw
                while buffered.count('"') % 2:  # a quoted field continues on the next line
                    more = text.readline()
                    if not more:
                        break
                    buffered += more
                    line_number += 1
                try:
                    parsed = next(csv.reader([buffered], strict=False), [])
                except csv.Error as exc:
                    if pending is not None:
                        yield self._made(make, pending_line, pending, least, pad)
                        pending = None
                    yield SkipRow("malformed_row", f"line {line_number}: {exc}")
                    continue
                values = parsed
            if pending is not None:
                if make is not None and len(pending) >= least:
                    if pad:
                        pending.append("")
                    try:
                        yield make(pending)
                    except SkipRow as skip:
                        yield SkipRow(skip.reason, f"line {pending_line}: {skip.detail}")
                else:
                    yield self._made(make, pending_line, pending, least, pad)
            pending, pending_line = values, line_number
        if pending is not None:
            if len(pending) < min(self.width, self.needed):
                self.truncated = True
                yield SkipRow("truncated_row", f"line {pending_line}: the file ends inside this row")
            else:
                yield self._made(make, pending_line, pending, least, pad)

    def _made(
        self, make: Callable[[list[str]], T] | None, line: int, values: list[str], least: int, pad: bool
    ) -> T | CsvRow | SkipRow:
        if len(values) < least:
            return SkipRow("malformed_row", f"line {line}: {len(values)} fields, expected {self.width}")
        if make is None:
            return CsvRow(line, values)
        if pad:
            values.append("")
        try:
            return make(values)
        except SkipRow as skip:
            return SkipRow(skip.reason, f"line {line}: {skip.detail}")

    def _checked(self, row: CsvRow) -> CsvRow | SkipRow:
        if len(row.values) < min(self.width, self.needed + 1):
            return SkipRow("malformed_row", f"line {row.line}: {len(row.values)} fields, expected {self.width}")
        return row

    def rows(self) -> Iterator[CsvRow | SkipRow]:
        """Data rows, or a SkipRow for a row the CSV reader cannot make sense of."""
        if self.quoted and self._first_data is None:
            yield from cast(Iterator[CsvRow | SkipRow], self._quoted_rows(None))
            return
        reader = self._reader
        pending: CsvRow | None = self._first_data
        while True:
            try:
                values = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                if pending is not None:
                    yield self._checked(pending)
                    pending = None
                yield SkipRow("malformed_row", f"line {reader.line_num}: {exc}")
                continue
            if not values or (len(values) == 1 and not values[0].strip()):
                continue
            if pending is not None:
                yield self._checked(pending)
            pending = CsvRow(reader.line_num, values)
        if pending is not None:
            if len(pending.values) < self.width:
                # The last row ends early: the file was cut off while being written or copied.
                self.truncated = True
                yield SkipRow("truncated_row", f"line {pending.line}: the file ends inside this row")
            else:
                yield pending


def _split_quoted(line: str, fields: int, needed: int) -> list[str] | None:
    """A line whose every field is double-quoted, with no quote inside any field, split by the
    ``","`` between fields; None for any other line (the csv module reads those)."""
    if line.count('"') != 2 * fields or line[0] != '"' or line[-1] != '"':
        return None
    if needed < fields:
        values = line.split('","', needed)
        values[0] = values[0][1:]  # cheaper than copying the whole line without its first quote
        values[-1] = ""  # the unread rest
        return values
    values = line[1:-1].split('","')
    return values if len(values) == fields else None


def text_lines(opened: OpenedFile) -> Iterator[tuple[int, str]]:
    """Numbered lines without their line endings."""
    for number, line in enumerate(opened.text, start=1):
        yield number, line.rstrip("\r\n")
