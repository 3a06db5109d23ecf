"""`permit_filed` signals from city building-permit open-data CSVs: one importer, driven by a mapping
(vpx.signals.sources.permit_mapping): a packaged city's (``cities/<city>.toml``) or an operator's own
file, so that a city nobody here has seen imports with no code.

A permit names the work (type, description, estimated cost, issue date) and, in most cities, the
contractors who will do it. The signal is about the contractor the mapping prefers (the general
contractor): a business with a project funded and dated — warm per D20 (a timeline, a named vendor).
Rows that name no business are skipped with the reason ``no_business``, placeholders such as "SELF
CONTRACTOR …" with ``placeholder_contractor``; the pipeline links the business to the catalogue as
the registry importers do (one contractor is one contact however many permits it holds), or creates
it from what the permit gives.
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import charset_normalizer

from vpx.contacts.normalise import name_key, text_key
from vpx.registries.reader import SNIFF_BYTES, ImportFailed, OpenedFile, detect_encoding, open_text
from vpx.signals.events import BusinessRef, SignalEvent
from vpx.signals.sources.permit_mapping import (
    MappingError,
    PermitMapping,
    cities,
    load_mapping,
    load_mapping_file,
)

# Estimated costs at or below this are placeholders (SF uses 1), not budgets.
PLACEHOLDER_COST = Decimal(100)
# The vertical a permit's work belongs to, by words in its type or description; else construction.
VERTICAL_WORDS: tuple[tuple[str, str], ...] = (
    ("solar", "solar"),
    ("photovoltaic", "solar"),
    ("roof", "home-services"),
    ("plumb", "home-services"),
    ("hvac", "home-services"),
    ("furnace", "home-services"),
    ("kitchen", "home-services"),
    ("bath", "home-services"),
    ("electric", "home-services"),
)


@dataclass
class PermitSkip:
    line: int
    reason: str
    message: str


def _money(raw: str) -> Decimal | None:
    text = raw.replace("$", "").replace(",", "").strip()
    try:
        value = Decimal(text) if text else None
    except InvalidOperation:
        return None
    return value if value is not None and value > PLACEHOLDER_COST else None


def _vertical(*texts: str) -> str:
    words = " ".join(texts).lower()
    for word, vertical in VERTICAL_WORDS:
        if word in words:
            return vertical
    return "construction"


@dataclass
class PermitReading:
    """What reading a file found: rows, skips (also appended to the caller's list), contractors."""

    rows_read: int = 0
    skipped: list[PermitSkip] = field(default_factory=list)
    contractors: set[tuple[str, str, str]] = field(default_factory=set)
    encoding: str | None = None


def _phone(raw: str) -> str | None:
    # Chicago writes "(312)986-8000 x": an extension marker with no digits.
    return re.sub(r"\s*[xX]\s*$", "", raw).strip() or None


def _contractor(row: dict[str, str], mapping: PermitMapping) -> tuple[BusinessRef | None, bool]:
    """The business the permit is about, and whether a placeholder name was passed over."""
    spec = mapping.contractors
    if spec is None:
        return None, False
    found: list[tuple[int, BusinessRef]] = []
    placeholder = False
    for n in range(1, (spec.count or 1) + 1):

        def get(key: str, n: int = n) -> str:
            # Several columns (an address as house number, street, suffix) are joined, empty ones skipped.
            return " ".join(" ".join(row.get(column, "") for column in spec.column_names(key, n)).split())

        name, kind = spec.business_name(get("name")), get("type").upper()
        if not name or kind in spec.ignore:
            continue
        if spec.is_placeholder(name):
            placeholder = True
            continue
        business = BusinessRef(
            name=name,
            city=(get("city") or mapping.city).title(),
            state=(get("state") or mapping.state).upper(),
            phone=_phone(get("phone")),
            address=get("address") or None,
            postal_code=get("postal_code").rstrip("-") or None,
        )
        found.append((0 if kind in spec.prefer else 1, business))
    return (min(found, key=lambda item: item[0])[1] if found else None), placeholder


def open_permits(path: Path, encoding: str) -> OpenedFile:
    """The export as text: in the mapping's encoding, or detected ("auto": a BOM, UTF-8, else
    charset-normalizer's best guess from the first bytes)."""
    if encoding != "auto":
        return open_text(path, encoding=encoding)
    try:
        with path.open("rb") as raw:
            head = raw.read(SNIFF_BYTES)
    except OSError as exc:
        raise ImportFailed(f"cannot open {path}: {exc.strerror or exc}", code="unreadable_file") from None
    if detect_encoding(head) != "cp1252":
        return open_text(path)  # a BOM, or UTF-8 (a stray Windows-1252 byte later is read as such)
    return open_text(path, encoding=guess_encoding(head))


def guess_encoding(head: bytes) -> str:
    """charset-normalizer's guess for bytes that are not UTF-8, Windows-1252 preferred among the
    guesses that read about as well: US exports are UTF-8 or Windows-1252, and on a few kilobytes of
    mostly ASCII the detector cannot tell Windows-1252 from Mac Icelandic."""
    matches = list(charset_normalizer.from_bytes(head))
    if not matches:
        return "cp1252"
    best = min(match.chaos for match in matches)
    for match in matches:
        if codecs.lookup(match.encoding).name == "cp1252" and match.chaos <= best + 0.1:
            return "cp1252"
    return codecs.lookup(matches[0].encoding).name


def read_permits(
    path: Path, mapping: PermitMapping, skipped: list[PermitSkip], reading: PermitReading | None = None
) -> Iterator[SignalEvent]:
    """One event per permit naming a business; the others are added to ``skipped`` with a reason.
    A mapping that names a column the file lacks raises MappingError before any row is read."""
    reading = reading if reading is not None else PermitReading()
    opened = open_permits(path, mapping.encoding)
    reading.encoding = opened.encoding
    line = 1
    try:
        reader = csv.reader(opened.text, strict=False)
        header = [name.strip() for name in next(reader, [])]
        mapping.check_header(header)
        for values in reader:
            line = reader.line_num
            reading.rows_read += 1
            row = dict(zip(header, values, strict=False))
            event = _event(row, mapping, line, skipped, reading)
            if event is not None:
                yield event
    except UnicodeDecodeError as exc:
        raise ImportFailed(
            f"{path.name} is not {opened.encoding} after line {line} ({exc.reason}): set encoding in the mapping",
            code="unreadable_file",
        ) from None
    finally:
        opened.close()


def _event(
    row: dict[str, str], mapping: PermitMapping, line: int, skipped: list[PermitSkip], reading: PermitReading
) -> SignalEvent | None:
    def skip(reason: str, message: str) -> None:
        item = PermitSkip(line, reason, message)
        skipped.append(item)
        reading.skipped.append(item)

    def get(column: str | None) -> str:
        return " ".join(row.get(column, "").split()) if column else ""

    number = get(mapping.permit_number)
    if not number:
        skip("no_permit_number", "the row has no permit number")
        return None
    business, placeholder = _contractor(row, mapping)
    if business is None:
        if placeholder:
            skip("placeholder_contractor", f"permit {number} names a placeholder, not a contractor")
        else:
            skip("no_business", f"permit {number} names no contractor")
        return None
    issued, dated_by = None, ""
    for column in mapping.issued:
        issued = mapping.parse_date(row.get(column, ""))
        if issued is not None:
            dated_by = column
            break
    if issued is None:
        shown = ", ".join(f"{c}={row.get(c, '')!r}" for c in mapping.issued)
        skip("no_date", f"permit {number} has no readable date ({shown})")
        return None
    permit_type, description = get(mapping.permit_type), get(mapping.description)
    cost = _money(get(mapping.cost))
    site = " ".join(get(c) for c in mapping.address if get(c))
    # A metro area's file names each site's city: the signal's; the contractor keeps its own (above).
    site_city = get(mapping.site_city).title() or mapping.city
    day = mapping.local_day(issued)
    fallback = dated_by != mapping.issued[0]
    evidence: dict[str, Any] = {
        "need": permit_type.lower() or "building permit",
        "timeline": f"permit dated {day} ({dated_by})" if fallback else f"permit issued {day}",
        "vendor_named": business.name,
        "permit_number": number,
        "work": description[:500],
        "site": f"{site}, {site_city}, {mapping.state}" if site else None,
    }
    if cost is not None:
        evidence["budget"] = f"${cost:,.2f}"
    reading.contractors.add((name_key(business.name), text_key(business.city) or "", business.state))
    label = permit_type.title() or "Building"
    return SignalEvent(
        category="permit_filed",
        industry=_vertical(permit_type, description),
        observed_at=issued,
        evidence={k: v for k, v in evidence.items() if v},
        source=mapping.source,
        source_record_id=number,
        topic=permit_type.lower()[:200] or None,
        summary=f"{label} permit {number} in {site_city}: {description[:200]}".strip(),
        state=mapping.state,
        city=site_city,
        business=business,
    )


__all__ = [
    "MappingError",
    "PermitMapping",
    "PermitReading",
    "PermitSkip",
    "cities",
    "load_mapping",
    "load_mapping_file",
    "read_permits",
]
