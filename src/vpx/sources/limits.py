"""What a publisher may cost one run, whichever kind of source: the largest download, the largest
file unzipped and how much a zip may expand, the longest line of a file read, the longest run and
the longest a request may go without real progress. Every kind takes them as options
(``--option max_download=20GB``); a source that sets none runs with the defaults below.

Sizes are written with K, M, G or T (powers of 1,024; ``B`` and ``iB`` may follow: ``500MB``,
``1.5GiB``) or as bytes; times as ``30s``, ``5m``, ``6h`` or ``1d``; the ratio as ``200`` or
``200:1``."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from vpx.sources.options import OptionSpec

KB, MB, GB, TB = 1024, 1024**2, 1024**3, 1024**4
_SIZE = re.compile(r"(\d{1,15}(?:\.\d{1,6})?)\s*([kmgt]?)(i?b)?")
_UNITS = {"": 1, "k": KB, "m": MB, "g": GB, "t": TB}
_TIME = re.compile(r"(\d{1,6})\s*([smhd])")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
_RATIO = re.compile(r"(\d{1,6})(?::1)?")

# A request whose answer brings less than this in ``stall_timeout`` is given up as stalled.
PROGRESS_BYTES = 64 * KB


def parse_size(text: str) -> int:
    """``500MB``, ``1.5GiB``, ``1048576`` … as bytes; ValueError for anything else."""
    found = _SIZE.fullmatch(text.strip().lower().replace(",", "").replace("_", ""))
    if found is None or (found.group(3) and not found.group(2) and found.group(3) != "b"):
        raise ValueError(f"{text!r} is not a size such as 500MB, 10GB or 1TB")
    return int(float(found.group(1)) * _UNITS[found.group(2)])


def format_size(size: int) -> str:
    """The size in its largest whole unit: 10737418240 -> ``10GB``."""
    for unit, scale in (("TB", TB), ("GB", GB), ("MB", MB), ("KB", KB)):
        if size % scale == 0:
            return f"{size // scale}{unit}"
    return str(size)


def human_size(size: int) -> str:
    """A size to read, not to write back: ``1.4 GB``, ``850 KB``, ``12 bytes``."""
    for unit, scale in (("TB", TB), ("GB", GB), ("MB", MB), ("KB", KB)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


def parse_seconds(text: str) -> int:
    """``30s``, ``5m``, ``6h``, ``1d`` as seconds; ValueError for anything else."""
    found = _TIME.fullmatch(text.strip().lower())
    if found is None:
        raise ValueError(f"{text!r} is not a time such as 30s, 5m, 6h or 1d")
    return int(found.group(1)) * _SECONDS[found.group(2)]


def format_seconds(seconds: float) -> str:
    """The time in its largest whole unit: 21600 -> ``6h``."""
    whole = int(seconds)
    for unit in ("d", "h", "m"):
        if whole % _SECONDS[unit] == 0 and whole >= _SECONDS[unit]:
            return f"{whole // _SECONDS[unit]}{unit}"
    return f"{whole}s"


def _size_check(least: int, most: int) -> Callable[[str], str]:
    def check(value: str) -> str:
        size = parse_size(value)
        if not least <= size <= most:
            raise ValueError(f"must be from {format_size(least)} to {format_size(most)}")
        return format_size(size)

    return check


def _time_check(least: int, most: int) -> Callable[[str], str]:
    def check(value: str) -> str:
        seconds = parse_seconds(value)
        if not least <= seconds <= most:
            raise ValueError(f"must be from {format_seconds(least)} to {format_seconds(most)}")
        return format_seconds(seconds)

    return check


def _ratio_check(value: str) -> str:
    found = _RATIO.fullmatch(value.strip().replace(" ", ""))
    if found is None or not 2 <= int(found.group(1)) <= 1000:
        raise ValueError("must be a whole number from 2 to 1000 (200 or 200:1: a file may unzip to 200 times its size)")
    return found.group(1)


@dataclass(frozen=True)
class Limits:
    """The bounds of one run (module docstring); ``of(options)`` reads them from a source's options."""

    # NPPES's monthly file is about 1 GB zipped: ten times that leaves room for its growth.
    max_download: int = 10 * GB
    # Its CSV is about 10 GB unzipped (the largest file any kind unzips).
    max_unpacked: int = 32 * GB
    # NPPES's files unzip at about 8-10:1 (8.3:1 measured on the shared sample); a file of nothing
    # but deactivated NPIs, every other field empty, reaches 95:1. A zip bomb goes past 1000:1.
    max_ratio: int = 200
    # The widest real line seen is NPPES's header, 12 KB; a field longer than this on one line is
    # refused before it is read into memory.
    max_line: int = 1 * MB
    max_run_time: int = 6 * 3600
    stall_timeout: int = 5 * 60

    @classmethod
    def of(cls, options: Mapping[str, str]) -> Limits:
        """The source's limits: its options where it sets them, the defaults elsewhere. ValueError
        for a value that does not read (checked at ``add``: only an edited database has one)."""
        found: dict[str, int] = {}
        for spec in OPTIONS:
            if spec.name in options:
                text = spec.check(options[spec.name]) if spec.check else options[spec.name]
                found[spec.name] = _READ[spec.name](text)
        return cls(**found)

    def describe(self, name: str) -> str:
        """A limit as an operator writes it (``max_download=10GB``), for messages."""
        return f"{name}={_SHOWN[name](getattr(self, name))}"


_READ: dict[str, Callable[[str], int]] = {
    "max_download": parse_size,
    "max_unpacked": parse_size,
    "max_ratio": int,
    "max_line": parse_size,
    "max_run_time": parse_seconds,
    "stall_timeout": parse_seconds,
}
_SHOWN: dict[str, Callable[[int], str]] = {
    "max_download": format_size,
    "max_unpacked": format_size,
    "max_ratio": str,
    "max_line": format_size,
    "max_run_time": format_seconds,
    "stall_timeout": format_seconds,
}
_DEFAULT = Limits()

# The options every kind takes besides its own.
OPTIONS = (
    OptionSpec(
        "max_download",
        f"the largest file or answer a run downloads (default {format_size(_DEFAULT.max_download)})",
        check=_size_check(MB, 4 * TB),
    ),
    OptionSpec(
        "max_unpacked",
        f"the largest file a run unzips (default {format_size(_DEFAULT.max_unpacked)})",
        check=_size_check(MB, 16 * TB),
    ),
    OptionSpec(
        "max_ratio",
        f"how many times its zipped size a file may unzip to (default {_DEFAULT.max_ratio})",
        check=_ratio_check,
    ),
    OptionSpec(
        "max_line",
        f"the longest line of a file a run reads (default {format_size(_DEFAULT.max_line)})",
        check=_size_check(KB, 64 * MB),
    ),
    OptionSpec(
        "max_run_time",
        f"the longest a run may take; it then fails (default {format_seconds(_DEFAULT.max_run_time)})",
        check=_time_check(1, 7 * 86_400),
    ),
    OptionSpec(
        "stall_timeout",
        f"a request that brings less than {PROGRESS_BYTES // KB} KB in this long is given up "
        f"(default {format_seconds(_DEFAULT.stall_timeout)})",
        check=_time_check(1, 86_400),
    ),
)
