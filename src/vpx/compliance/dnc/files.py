"""Reading the Do-Not-Call registry's data files.

The registry publishes its exact layouts to subscribers only, so the reader takes every flat form the
public descriptions give, whatever separates the fields (commas, pipes, semicolons, tabs or spaces):
- full lists: one number a line, ten digits (``2025550143``), or the area code and the seven-digit
  number in two fields (``202,5550143``); punctuation inside a number (``(202) 555-0143``) and a
  leading country code 1 are taken off;
- change lists: the same number with an add or delete mark (``A``/``D``, ``add``/``delete``, ``+``/``-``,
  and the like) and, usually, a date, which is read past.
A first line with no number is a header and skipped; blank lines are skipped; any other line that is
not one of these is an error naming its line (nothing of the file is imported). A ``.zip`` is read
member by member, as the registry ships its files zipped.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

_SPLIT = re.compile(r"[\s,|;]+")
_PUNCTUATION = re.compile(r"[()\-.]")
_DATE = re.compile(r"^(\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4}|\d{4}/\d{1,2}/\d{1,2})$")
_COMPACT_DATE = re.compile(r"^(19|20|21)\d\d(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])$")
ADD_MARKS = frozenset({"A", "ADD", "ADDED", "ADDITION", "I", "INSERT", "N", "NEW", "+"})
DELETE_MARKS = frozenset({"D", "DEL", "DELETE", "DELETED", "DELETION", "R", "REMOVE", "REMOVED", "-"})


class DncFileError(Exception):
    """A file the reader cannot take: the message names the line."""


@dataclass
class DncFile:
    """A file's numbers by area code: listed (no mark, or an add mark) and deleted (a delete mark)."""

    added: dict[str, set[int]] = field(default_factory=dict)
    deleted: dict[str, set[int]] = field(default_factory=dict)
    lines: int = 0
    unmarked: int = 0  # lines without a mark (a change list needs one on every line)

    def area_codes(self) -> set[str]:
        return set(self.added) | set(self.deleted)

    def count(self) -> int:
        return sum(map(len, self.added.values())) + sum(map(len, self.deleted.values()))


def _number(fields: list[str], where: str) -> int:
    """The ten-digit number of a line's digit fields (one of ten, or three then seven)."""
    digits = [_PUNCTUATION.sub("", f) for f in fields]
    joined = "".join(digits)
    if len(digits) == 1 and len(joined) == 11 and joined.startswith("1"):
        joined = joined[1:]
    if not (len(joined) == 10 and (len(digits) == 1 or [len(d) for d in digits] == [3, 7])):
        raise DncFileError(f"{where}: {' '.join(fields)!r} is not a ten-digit number (or area code and number)")
    if joined[0] in "01":
        raise DncFileError(f"{where}: {joined} is not a North American number (an area code starts with 2-9)")
    return int(joined)


def read_line(text: str, where: str) -> tuple[int, str | None] | None:
    """(number, mark) of one line, mark ``add``, ``delete`` or None; None for a line with no number."""
    fields = [f for f in _SPLIT.split(text.strip()) if f]
    if not fields:
        return None
    mark: str | None = None
    numeric: list[str] = []
    others: list[str] = []
    for value in fields:
        upper = value.upper()
        if upper in ADD_MARKS or upper in DELETE_MARKS:
            if mark is not None:
                raise DncFileError(f"{where}: two add/delete marks")
            mark = "add" if upper in ADD_MARKS else "delete"
        elif _DATE.match(value) or _COMPACT_DATE.match(value):
            continue
        elif _PUNCTUATION.sub("", value).isdigit():
            numeric.append(value)
        else:
            others.append(value)
    if not numeric:
        if mark is not None and not others:
            raise DncFileError(f"{where}: a mark with no number")
        return None
    if others:
        raise DncFileError(f"{where}: {others[0]!r} is neither a number, a date nor an add/delete mark")
    return _number(numeric, where), mark


def _text_lines(path: Path) -> Iterator[tuple[str, str]]:
    """(where, line) for every line of the file, or of each member of a zip."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if info.is_dir():
                    continue
                with archive.open(info) as raw:
                    text = io.TextIOWrapper(raw, encoding="latin-1", newline="")
                    for number, line in enumerate(text, start=1):
                        yield f"{info.filename} line {number}", line
        return
    with path.open(encoding="latin-1", newline="") as handle:
        for number, line in enumerate(handle, start=1):
            yield f"line {number}", line


def read_file(path: Path) -> DncFile:
    """Every number of the file by area code; DncFileError naming the first bad line."""
    found = DncFile()
    seen_number = False
    for where, line in _text_lines(path):
        try:
            parsed = read_line(line, where)
        except DncFileError:
            if not seen_number and not any(ch.isdigit() for ch in line):
                continue  # a header
            raise
        if parsed is None:
            if line.strip() and seen_number and any(ch.isalpha() for ch in line):
                raise DncFileError(f"{where}: {line.strip()[:60]!r} holds no number")
            continue
        seen_number = True
        number, mark = parsed
        found.lines += 1
        area = str(number // 10_000_000)
        if mark is None:
            found.unmarked += 1
        # A number marked twice takes its last mark.
        target, other = (found.deleted, found.added) if mark == "delete" else (found.added, found.deleted)
        target.setdefault(area, set()).add(number)
        if area in other:
            other[area].discard(number)
    return found
