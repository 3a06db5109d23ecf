"""Opening what publishers ship: one member of a zip archive streamed to disk (the CRC checked as it
goes), and the rows of a spreadsheet (.xlsx) read with the standard library, row by row."""

from __future__ import annotations

import re
import shutil
import zipfile
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from xml.etree.ElementTree import iterparse

from vpx.sources.fetch import SourceFailed

CHUNK = 4 * 1024 * 1024
_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"


def members(archive: Path) -> list[str]:
    try:
        with zipfile.ZipFile(archive) as opened:
            return opened.namelist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceFailed(f"{archive.name} is not a readable zip archive ({exc})", code="unexpected_layout") from None


def extract(archive: Path, pattern: str, folder: Path, *, exclude: str | None = None) -> Path:
    """The one member whose name matches ``pattern`` (a regular expression, case-insensitive; not
    ``exclude``), written to ``folder``. SourceFailed when there is none, or more than one."""
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
        with zipfile.ZipFile(archive) as opened, opened.open(found[0]) as source, target.open("wb") as out:
            shutil.copyfileobj(source, out, CHUNK)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        target.unlink(missing_ok=True)
        raise SourceFailed(f"{archive.name}: {found[0]} cannot be unpacked ({exc})", code="unexpected_layout") from None
    return target


def xlsx_rows(path: Path) -> Iterator[list[str]]:
    """The first worksheet's rows as text cells (empty cells as ""); numbers as written, dates left
    as Excel's day numbers (``excel_day``)."""
    try:
        book = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceFailed(f"{path.name} is not a spreadsheet (.xlsx) ({exc})", code="unexpected_layout") from None
    with book:
        strings = _shared_strings(book)
        sheet = _first_sheet(book)
        with book.open(sheet) as handle:
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


def _shared_strings(book: zipfile.ZipFile) -> list[str]:
    if "xl/sharedStrings.xml" not in book.namelist():
        return []
    strings: list[str] = []
    parts: list[str] = []
    with book.open("xl/sharedStrings.xml") as handle:
        for _event, element in iterparse(handle, events=("end",)):
            if element.tag == f"{_NS}t":
                parts.append(element.text or "")
            elif element.tag == f"{_NS}si":
                strings.append("".join(parts))
                parts = []
                element.clear()
    return strings


def _first_sheet(book: zipfile.ZipFile) -> str:
    """The first worksheet named by the workbook (through its relationships), else sheet1.xml."""
    names = book.namelist()
    try:
        with book.open("xl/workbook.xml") as handle:
            first = next(
                (el.get(f"{_REL_NS}id") for _, el in iterparse(handle, events=("end",)) if el.tag == f"{_NS}sheet"),
                None,
            )
        with book.open("xl/_rels/workbook.xml.rels") as handle:
            for _, element in iterparse(handle, events=("end",)):
                if element.get("Id") == first and element.get("Target"):
                    target = element.get("Target", "").lstrip("/")
                    path = target if target.startswith("xl/") else f"xl/{target}"
                    if path in names:
                        return path
    except KeyError:
        pass
    sheets = sorted(n for n in names if re.fullmatch(r"xl/worksheets/sheet\d+\.xml", n))
    if not sheets:
        raise SourceFailed("the spreadsheet has no worksheet", code="unexpected_layout")
    return sheets[0]
