"""DROP's files: the downloaded ZIP's lists, and the answer files uploaded back.

A download holds one CSV per list the broker selected, named ``<YYYYMMDD>_<BrokerId>_<List>.csv``,
header ``ID,Hash`` (header only when the list has nothing new), and perhaps
``<YYYYMMDD>_<BrokerId>_Removed.csv`` (``ID,Hash,ListType``: requests withdrawn). Work item ids are 12
letters or digits; hashes 44 characters of Base64. An answer is ``Id,Status`` per item, named as the
list it answers, with an optional ``_<suffix>`` of up to 10 letters or digits (vpx adds ``_rN`` when it
sends a list again).
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from dataclasses import dataclass, field

ITEM_ID = re.compile(r"^[A-Za-z0-9]{12}$")
HASH = re.compile(r"^[A-Za-z0-9+/]{43}=$")
LIST_FILE = re.compile(r"^(?:.*/)?(\d{8})_(\d{4})_([A-Za-z]+)\.csv$")
REMOVED = "Removed"
MAX_MEMBER_BYTES = 2 * 1024**3  # a list of ten million work items is about 600 MB


class DropArchiveError(Exception):
    """A download vpx cannot read: the message says where."""


@dataclass
class ListFile:
    name: str
    list_type: str
    rows: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Archive:
    lists: list[ListFile] = field(default_factory=list)
    removed: list[tuple[str, str, str]] = field(default_factory=list)

    def items(self) -> int:
        return sum(len(f.rows) for f in self.lists)


def _rows(archive: zipfile.ZipFile, info: zipfile.ZipInfo, header: list[str]) -> list[list[str]]:
    if info.file_size > MAX_MEMBER_BYTES:
        raise DropArchiveError(f"{info.filename}: {info.file_size} bytes, more than a list can be")
    with archive.open(info) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
        reader = csv.reader(text)
        first = next(reader, None)
        if first is None:
            return []
        if [cell.strip() for cell in first] != header:
            raise DropArchiveError(f"{info.filename}: its header is {','.join(first)!r}, not {','.join(header)}")
        rows = []
        for number, row in enumerate(reader, start=2):
            if not row or all(not cell.strip() for cell in row):
                continue
            cells = [cell.strip() for cell in row]
            if len(cells) != len(header) or not ITEM_ID.match(cells[0]) or not HASH.match(cells[1]):
                raise DropArchiveError(f"{info.filename} line {number}: not a work item id and a hash")
            rows.append(cells)
        return rows


def read_archive(content: bytes) -> Archive:
    """The lists and removals of a downloaded ZIP; DropArchiveError when it is not one DROP makes."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(content))
    except zipfile.BadZipFile:
        raise DropArchiveError("the download is not a ZIP archive") from None
    found = Archive()
    with archive:
        for info in archive.infolist():
            if info.is_dir():
                continue
            named = LIST_FILE.match(info.filename)
            if named is None:
                raise DropArchiveError(f"{info.filename}: not a DROP list (<YYYYMMDD>_<broker id>_<list>.csv)")
            list_type = named.group(3)
            name = info.filename.rsplit("/", 1)[-1]
            if list_type == REMOVED:
                for item_id, item_hash, removed_from in _rows(archive, info, ["ID", "Hash", "ListType"]):
                    found.removed.append((item_id, item_hash, removed_from))
                continue
            listed = ListFile(name=name, list_type=list_type)
            listed.rows = [(item_id, item_hash) for item_id, item_hash in _rows(archive, info, ["ID", "Hash"])]
            found.lists.append(listed)
    return found


def answer_file(rows: list[tuple[str, int]]) -> bytes:
    """An ``Id,Status`` CSV."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["Id", "Status"])
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def answer_name(list_file: str, attempt: int) -> str:
    """The answer's name: the list's own the first time, with ``_r<attempt>`` after (DROP refuses a
    name already uploaded for this download)."""
    if attempt <= 0:
        return list_file
    stem = list_file.removesuffix(".csv")
    return f"{stem}_r{attempt}.csv"
