"""Permit mappings: how one city's building-permit export reads (a TOML file). The packaged ones
(``cities/<city>.toml``: ``--city``) and an operator's own (``--mapping FILE``) are read and checked
alike, before any row of the export is: a bad mapping is one error naming its key and, for a
column, the file's header.

```toml
city = "Nashville"                 # where the permits are: a signal's and a contractor's city unless a column gives one
state = "TN"
date_format = "epoch_ms"           # a strptime pattern ("%m/%d/%Y"), "iso", "epoch_s" or "epoch_ms"
timezone = "America/Chicago"       # optional (default UTC): the dates' zone, and the day of an epoch
encoding = "auto"                  # optional: a codec name, or "auto" (detected; the default)
source = "nashville"               # optional: signals' source is "permits:<source>" (default: the file's name)

[columns]
permit_number = "Permit__"
permit_type = "Permit_Type_Description"        # optional
issued = ["Date_Issued", "Date_Entered"]       # one column, or several: the first readable date wins
cost = "Const_Cost"                            # optional
description = "Purpose"                        # optional
address = ["Address"]                          # optional: the site, joined with spaces
site_city = "City"                             # optional: the site's city, the signal's (a metro area's file)

[contractors]                      # optional: without it no row names a business (skipped: no_business)
name = "Contact"                   # one contractor column; or numbered groups: "CONTRACTOR_{n}_NAME" with count
name_pattern = '(?P<person>[^,]+),\\s*(?P<name>.+)'   # optional: the business within the name (group "name")
phone = "Contact_Phone"            # optional, as are city, state, postal_code and type
address = ["No", "Street", "Suffix"]   # optional: one column, or several joined with spaces
ignore_names = ['^SELF CONTRACTOR\\b', '^SELF PERMIT$']   # placeholders (case-insensitive regular expressions)
# count = 15, prefer = [types], ignore = [types]: for numbered groups with a type column
```
"""

from __future__ import annotations

import codecs
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from vpx.geography import STATE_CODES

CITIES_PACKAGE = "vpx.signals.sources.cities"
DATE_KINDS = ("iso", "epoch_s", "epoch_ms")
TOP_KEYS = {"city", "state", "date_format", "timezone", "encoding", "source", "columns", "contractors"}
COLUMN_KEYS = {"permit_number", "permit_type", "issued", "cost", "description", "address", "site_city"}
CONTRACTOR_COLUMNS = ("name", "type", "phone", "address", "city", "state", "postal_code")
CONTRACTOR_KEYS = {*CONTRACTOR_COLUMNS, "count", "prefer", "ignore", "ignore_names", "name_pattern"}
# Contractor keys that may name several columns, joined with spaces (an address split over columns).
CONTRACTOR_LISTS = {"address"}


class MappingError(ValueError):
    """A mapping that cannot be used, with the key at fault (``code``: invalid_mapping); or, for a
    packaged city's mapping, a file that is not that city's export (``code``: invalid_file)."""

    def __init__(self, message: str, *, code: str = "invalid_mapping") -> None:
        super().__init__(message)
        self.code = code


class UnknownCity(MappingError):
    def __init__(self, message: str) -> None:
        super().__init__(message, code="invalid_parameters")


@dataclass(frozen=True)
class Contractors:
    name: str
    count: int | None = None  # numbered groups ("{n}" in the column names), else one contractor column
    # type, phone, address, city, state, postal_code: one column each, several for an address
    columns: dict[str, tuple[str, ...]] = field(default_factory=dict)
    prefer: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    ignore_names: tuple[re.Pattern[str], ...] = ()
    name_pattern: re.Pattern[str] | None = None

    def column_names(self, key: str, n: int) -> tuple[str, ...]:
        """The columns of contractor ``n`` (from 1) holding ``key``; none when the mapping has no such key."""
        templates = (self.name,) if key == "name" else self.columns.get(key, ())
        return tuple(template.format(n=n) for template in templates)

    def business_name(self, value: str) -> str:
        """The business within a contractor value: name_pattern's ``name`` group when the pattern
        matches the whole value and the group is not empty, else the value as it is."""
        found = self.name_pattern.fullmatch(value) if self.name_pattern is not None else None
        name = " ".join((found.group("name") or "").split()) if found is not None else ""
        return name or value

    def is_placeholder(self, name: str) -> bool:
        return any(pattern.search(name) for pattern in self.ignore_names)


@dataclass(frozen=True)
class PermitMapping:
    slug: str
    city: str
    state: str
    date_format: str
    permit_number: str
    issued: tuple[str, ...]
    permit_type: str | None = None
    cost: str | None = None
    description: str | None = None
    address: tuple[str, ...] = ()
    site_city: str | None = None  # a file covering several cities: each site's own
    contractors: Contractors | None = None
    timezone: ZoneInfo | None = None
    encoding: str = "auto"
    origin: str = ""  # where the mapping was read from, for messages
    packaged: bool = False  # one of cities/*.toml (--city)

    @property
    def source(self) -> str:
        return f"permits:{self.slug}"

    def parse_date(self, raw: str) -> datetime | None:
        """A permit date as an aware UTC datetime, or None when the text is empty or unreadable."""
        text = raw.strip()
        if not text:
            return None
        zone = self.timezone or UTC
        try:
            if self.date_format in ("epoch_s", "epoch_ms"):
                seconds = float(text) / (1000 if self.date_format == "epoch_ms" else 1)
                return datetime.fromtimestamp(seconds, UTC)
            found = datetime.fromisoformat(text) if self.date_format == "iso" else _strptime(text, self.date_format)
        except (ValueError, OverflowError, OSError):
            return None
        return (found if found.tzinfo else found.replace(tzinfo=zone)).astimezone(UTC)

    def local_day(self, moment: datetime) -> str:
        return moment.astimezone(self.timezone or UTC).date().isoformat()

    def check_header(self, header: list[str]) -> None:
        """Every column the mapping names is in the file's header, or a MappingError says which is not."""
        wanted: list[tuple[str, str]] = [("columns.permit_number", self.permit_number)]
        wanted += [("columns.issued", c) for c in self.issued]
        wanted += [(f"columns.{k}", c) for k, c in (("permit_type", self.permit_type), ("cost", self.cost),
                                                      ("description", self.description),
                                                      ("site_city", self.site_city)) if c]  # fmt: skip
        wanted += [("columns.address", c) for c in self.address]
        if self.contractors is not None:
            for key in CONTRACTOR_COLUMNS:
                wanted += [(f"contractors.{key}", c) for c in self.contractors.column_names(key, 1)]
        known = set(header)
        for key, column in wanted:
            if column not in known:
                shown = ", ".join(header[:60]) + (", …" if len(header) > 60 else "")
                if self.packaged:
                    raise MappingError(
                        f"the file is not a {self.city} permits file: no column {column!r} ({key}) in its header "
                        f"({shown}); for another city's export write a mapping (--mapping)",
                        code="invalid_file",
                    )
                raise MappingError(f"{self.origin}: {key}: no column {column!r} in the file's header ({shown})")


def _strptime(text: str, pattern: str) -> datetime:
    try:
        return datetime.strptime(text, pattern)
    except ValueError:
        # A date pattern on a date-and-time value ("03/02/2024 12:00:00 AM"): the date part.
        if " " in text:
            return datetime.strptime(text.split(" ", 1)[0], pattern)
        raise


def cities() -> list[str]:
    return sorted(
        p.name.removesuffix(".toml") for p in resources.files(CITIES_PACKAGE).iterdir() if p.name.endswith(".toml")
    )


def load_mapping(slug: str) -> PermitMapping:
    """A packaged city's mapping (``--city``)."""
    if slug not in cities():
        raise UnknownCity(f"no permit mapping for {slug!r}; known cities: {', '.join(cities())}")
    text = resources.files(CITIES_PACKAGE).joinpath(f"{slug}.toml").read_text()
    return replace(parse_mapping(text, slug=slug, origin=f"{slug}.toml"), packaged=True)


def load_mapping_file(path: Path) -> PermitMapping:
    """An operator's mapping file (``--mapping FILE``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MappingError(f"{path}: cannot read the mapping: {exc}") from None
    return parse_mapping(text, slug=path.stem, origin=str(path))


def parse_mapping(text: str, *, slug: str, origin: str) -> PermitMapping:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MappingError(f"{origin}: not valid TOML: {exc}") from None

    def fail(key: str, message: str) -> MappingError:
        return MappingError(f"{origin}: {key}: {message}")

    _unknown(data, TOP_KEYS, "", fail)
    city, state = _text(data, "city", fail), _text(data, "state", fail).upper()
    if state not in STATE_CODES:
        raise fail("state", f"{state!r} is not a two-letter US state code")
    date_format = _text(data, "date_format", fail)
    if date_format not in DATE_KINDS:
        _check_pattern(date_format, fail)
    timezone = None
    if "timezone" in data:
        try:
            timezone = ZoneInfo(_text(data, "timezone", fail))
        except (ZoneInfoNotFoundError, ValueError):
            raise fail("timezone", f"{data['timezone']!r} is not an IANA time zone (America/Chicago, say)") from None
    encoding = str(data.get("encoding", "auto"))
    if encoding != "auto":
        try:
            encoding = codecs.lookup(encoding).name
        except LookupError:
            raise fail("encoding", f'{encoding!r} is not an encoding Python knows (or "auto")') from None
    source = data.get("source", slug)
    if not isinstance(source, str) or not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,22}", source):
        raise fail(
            "source", f"{source!r}: use 1-23 lower-case letters, digits, - or _ (the file's name is the default)"
        )
    columns = data.get("columns")
    if not isinstance(columns, dict):
        raise fail("columns", "a [columns] table is required")
    _unknown(columns, COLUMN_KEYS, "columns.", fail)
    return PermitMapping(
        slug=source,
        city=city,
        state=state,
        date_format=date_format,
        permit_number=_text(columns, "permit_number", fail, prefix="columns."),
        issued=_names(columns, "issued", fail, required=True),
        permit_type=_optional(columns, "permit_type", fail),
        cost=_optional(columns, "cost", fail),
        description=_optional(columns, "description", fail),
        address=_names(columns, "address", fail, required=False),
        site_city=_optional(columns, "site_city", fail),
        contractors=_contractors(data.get("contractors"), fail),
        timezone=timezone,
        encoding=encoding,
        origin=origin,
    )


Fail = Callable[[str, str], MappingError]


def _unknown(table: dict[str, Any], allowed: set[str], prefix: str, fail: Fail) -> None:
    for key in table:
        if key not in allowed:
            raise fail(f"{prefix}{key}", f"unknown key; known keys: {', '.join(sorted(allowed))}")


def _text(table: dict[str, Any], key: str, fail: Fail, *, prefix: str = "") -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise fail(prefix + key, "required, a non-empty string")
    return value.strip()


def _optional(table: dict[str, Any], key: str, fail: Fail) -> str | None:
    return _text(table, key, fail, prefix="columns.") if key in table else None


def _names(table: dict[str, Any], key: str, fail: Fail, *, required: bool) -> tuple[str, ...]:
    value = table.get(key)
    if value is None and not required:
        return ()
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(v, str) and v.strip() for v in names):
        raise fail(f"columns.{key}", "a column name, or a list of column names")
    return tuple(v.strip() for v in names)


def _check_pattern(pattern: str, fail: Fail) -> None:
    sample = datetime(2026, 11, 27, 13, 45, 30)
    try:
        if "%" not in pattern or datetime.strptime(sample.strftime(pattern), pattern) is None:
            raise ValueError(pattern)
    except ValueError:
        raise fail(
            "date_format", f"{pattern!r} is not a strptime pattern (%m/%d/%Y, say) nor one of {', '.join(DATE_KINDS)}"
        ) from None


def _contractors(spec: Any, fail: Fail) -> Contractors | None:
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise fail("contractors", "a [contractors] table")
    _unknown(spec, CONTRACTOR_KEYS, "contractors.", fail)
    name = spec.get("name")
    if not isinstance(name, str) or not name.strip():
        raise fail("contractors.name", "required, the contractor's name column")
    grouped = "{n}" in name
    count = spec.get("count")
    if grouped and (not isinstance(count, int) or not 1 <= count <= 100):
        raise fail("contractors.count", "numbered columns ({n}) need a count from 1 to 100")
    if not grouped and count is not None:
        raise fail("contractors.count", "only for numbered columns: put {n} in the column names")
    columns: dict[str, tuple[str, ...]] = {}
    for key in CONTRACTOR_COLUMNS[1:]:
        if key in spec:
            value = spec[key]
            several = key in CONTRACTOR_LISTS and isinstance(value, list) and bool(value)
            names = value if several else [value]
            if not all(isinstance(v, str) and v.strip() and ("{n}" in v) == grouped for v in names):
                shape = "a column name, or a list of column names," if key in CONTRACTOR_LISTS else "a column name,"
                raise fail(f"contractors.{key}", f"{shape} numbered with {{n}} like contractors.name")
            columns[key] = tuple(v.strip() for v in names)
    patterns = []
    for raw in _strings(spec, "ignore_names", fail):
        try:
            patterns.append(re.compile(raw, re.IGNORECASE))
        except re.error as exc:
            raise fail("contractors.ignore_names", f"{raw!r} is not a regular expression: {exc}") from None
    return Contractors(
        name=name.strip(),
        name_pattern=_name_pattern(spec.get("name_pattern"), fail),
        count=count if grouped else None,
        columns=columns,
        prefer=tuple(s.upper() for s in _strings(spec, "prefer", fail)),
        ignore=tuple(s.upper() for s in _strings(spec, "ignore", fail)),
        ignore_names=tuple(patterns),
    )


def _name_pattern(raw: Any, fail: Fail) -> re.Pattern[str] | None:
    key = "contractors.name_pattern"
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.strip():
        raise fail(key, "a regular expression with a group named name, (?P<name>…)")
    try:
        pattern = re.compile(raw, re.IGNORECASE)
    except re.error as exc:
        raise fail(key, f"{raw!r} is not a regular expression: {exc}") from None
    if "name" not in pattern.groupindex:
        raise fail(key, f"{raw!r} has no group named name: write the business's part as (?P<name>…)")
    return pattern


def _strings(spec: dict[str, Any], key: str, fail: Fail) -> list[str]:
    value = spec.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fail(f"contractors.{key}", "a list of strings")
    return list(value)
