"""Readers of the operator's files of address ranges, each a generator of ``RangeRow`` (a file of half a
million rows is never held twice):

- ``csv``: ranges the operator mapped to businesses (kind ``business``);
- ``iptoasn``: the public ip2asn TSV of iptoasn.com, plain or gzipped;
- ``mmdb``: a MaxMind-format ASN database (GeoLite2-ASN, DB-IP ASN Lite, IPinfo's ASN databases).

ASN ranges get their kind from ``vpx.visitors.networks.classify``, else ``unknown`` (kept: they carry
the organisation and AS number, never a negative). A bad row is appended to ``problems`` with its line
(or record) number and skipped; a file that cannot be read as its format at all raises ValueError, so
that an import replaces nothing with it.
"""

from __future__ import annotations

import csv
import gzip
import ipaddress
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from vpx.contacts.identifiers import registrable_domain
from vpx.ids import parse_number_id
from vpx.visitors.networks import classify
from vpx.visitors.ranges import MAPPED_FIRST, MAPPED_LAST, Kind

MAX_CONTACT_ID = (1 << 63) - 1  # the column is a signed 64-bit integer


@dataclass(frozen=True, slots=True)
class RangeRow:
    family: int  # 4 or 6
    start: int
    end: int  # inclusive
    kind: Kind
    domain: str | None
    contact_id: int | None
    organisation: str | None
    asn: int | None


@dataclass
class FileProblem:
    line: int  # 1-based line (or record number for mmdb)
    reason: str  # short code: invalid_network, invalid_address, reversed_range, no_business, ...
    message: str


SHOWN_IN_REFUSAL = 3


def nothing_read(problems: list[FileProblem], format: str) -> str:
    """Why a file gave no range: its first bad lines, each with its number and value (as the registry
    importers say it), and how many there were."""
    place = "record" if format == "mmdb" else "line"
    shown = "; ".join(f"{place} {p.line}: {p.message}" for p in problems[:SHOWN_IN_REFUSAL])
    if len(problems) > SHOWN_IN_REFUSAL:
        shown += f"; {len(problems) - SHOWN_IN_REFUSAL} more"
    count = f"{len(problems)} bad row{'' if len(problems) == 1 else 's'}"
    return f"no range could be read: {shown} ({count}; is --format {format} right?)"


class _BadRow(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


# --- csv -------------------------------------------------------------------------------------------


def read_csv(path: Path, problems: list[FileProblem]) -> Iterator[RangeRow]:
    """The business ranges of a CSV with a header: ``network`` (CIDR or one address) or
    ``start_ip,end_ip``; ``domain`` (a host name or URL, kept as its registrable domain) and/or
    ``contact_id`` (``ct_123`` or ``123``); ``organisation`` optional. UTF-8, with or without BOM.
    Blank lines and lines starting with ``#`` are skipped. Raises ValueError when the header lacks the
    address or business columns."""
    with path.open(encoding="utf-8-sig", newline="") as file:
        reader = csv.reader(file)
        header = next(reader, None)
        if header is None:
            raise ValueError("the file is empty (a header row is required)")
        columns = _columns(header)
        for cells in reader:
            if not cells or not "".join(cells).strip() or cells[0].lstrip().startswith("#"):
                continue
            row = dict(zip(columns, (cell.strip() for cell in cells), strict=False))
            try:
                yield _business_row(row)
            except _BadRow as bad:
                problems.append(FileProblem(reader.line_num, bad.reason, bad.message))


_ALIASES = {"organization": "organisation", "start": "start_ip", "end": "end_ip", "cidr": "network"}


def _columns(header: list[str]) -> list[str]:
    names = [_ALIASES.get(name.strip().lower(), name.strip().lower()) for name in header]
    if "network" not in names and not {"start_ip", "end_ip"} <= set(names):
        raise ValueError("the header must name a `network` column or `start_ip` and `end_ip` columns")
    if "domain" not in names and "contact_id" not in names:
        raise ValueError("the header must name a `domain` and/or a `contact_id` column")
    return names


def _business_row(row: Mapping[str, str]) -> RangeRow:
    if row.get("network"):
        family, start, end = _network(row["network"])
    elif row.get("start_ip") or row.get("end_ip"):
        family, start, end = _span(row.get("start_ip", ""), row.get("end_ip", ""))
    else:
        raise _BadRow("invalid_network", "no network and no start_ip/end_ip")
    domain = contact_id = None
    if row.get("domain"):
        domain = registrable_domain(row["domain"])
        if domain is None or _is_address(domain):
            raise _BadRow("invalid_domain", f"not a domain: {row['domain']!r}")
    if row.get("contact_id"):
        contact_id = _contact_id(row["contact_id"])
    if domain is None and contact_id is None:
        raise _BadRow("no_business", "neither a domain nor a contact_id")
    return RangeRow(family, start, end, "business", domain, contact_id, row.get("organisation") or None, None)


def _network(text: str) -> tuple[int, int, int]:
    """A CIDR network's family, first and last address. Host bits set (``192.0.2.5/24``) is a bad row,
    not the /24: a line mapping addresses to a business must not grow from one host to 256 on a guess;
    the message names the network the operator may have meant."""
    try:
        network = ipaddress.ip_network(text)
    except ValueError:
        try:
            meant = ipaddress.ip_network(text, strict=False)
        except ValueError:
            raise _BadRow("invalid_network", f"not a network: {text!r}") from None
        raise _BadRow("host_bits_set", f"{text} has host bits set (the network is {meant})") from None
    return network.version, int(network.network_address), int(network.broadcast_address)


def _span(first_text: str, last_text: str) -> tuple[int, int, int]:
    try:
        first, last = ipaddress.ip_address(first_text), ipaddress.ip_address(last_text)
    except ValueError:
        raise _BadRow("invalid_address", f"not an address range: {first_text!r} to {last_text!r}") from None
    if first.version != last.version:
        raise _BadRow("mixed_family", f"{first} and {last} are not of one address family")
    if int(last) < int(first):
        raise _BadRow("reversed_range", f"{last} comes before {first}")
    return first.version, int(first), int(last)


def _contact_id(text: str) -> int:
    if text[:3].lower() == "ct_":
        number = parse_number_id("ct", "ct_" + text[3:])
    else:
        number = int(text) if text.isascii() and text.isdigit() else None
    if number is None or not 0 < number <= MAX_CONTACT_ID:
        raise _BadRow("invalid_contact_id", f"not a contact id: {text!r} (ct_123 or 123)")
    return number


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


# --- iptoasn ---------------------------------------------------------------------------------------


def read_iptoasn(path: Path, problems: list[FileProblem]) -> Iterator[RangeRow]:
    """The ranges of an ip2asn TSV (``ip2asn-v4.tsv``, ``-v6``, ``-combined``, gzipped or not): tab
    separated ``range_start range_end AS_number country_code AS_description``, no header. Rows of AS 0
    ("Not routed") are skipped without a problem."""
    with _open_text(path) as file:
        for line_number, line in enumerate(file, start=1):
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) < 3 or not line.strip():
                if line.strip():
                    problems.append(FileProblem(line_number, "invalid_line", "fewer than three tab-separated fields"))
                continue
            try:
                row = _asn_row(fields)
            except _BadRow as bad:
                problems.append(FileProblem(line_number, bad.reason, bad.message))
                continue
            if row is not None:
                yield row


def _open_text(path: Path) -> IO[str]:
    """The file as text, gunzipped when it starts with gzip's magic number (whatever its name)."""
    with path.open("rb") as probe:
        gzipped = probe.read(2) == b"\x1f\x8b"
    if gzipped:
        return gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="")
    # AS descriptions come from registries in many encodings: a stray byte must not end the import.
    return path.open(encoding="utf-8", errors="replace", newline="")


def _asn_row(fields: list[str]) -> RangeRow | None:
    family, start, end = _span(fields[0].strip(), fields[1].strip())
    asn = _asn(fields[2])
    if asn == 0:
        return None
    description = fields[4].strip() if len(fields) > 4 else ""
    organisation = description if description and description != "Not routed" else None
    return RangeRow(family, start, end, classify(asn, organisation) or "unknown", None, None, organisation, asn)


def _asn(value: object) -> int:
    """An AS number from ``64496``, ``"64496"`` or ``"AS64496"``."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        text = str(value).strip().upper().removeprefix("AS")
        if not text.isdigit():
            raise _BadRow("invalid_asn", f"not an AS number: {value!r}")
        number = int(text)
    if not 0 <= number < 1 << 32:
        raise _BadRow("invalid_asn", f"not an AS number: {value!r}")
    return number


# --- mmdb ------------------------------------------------------------------------------------------

_ASN_KEYS = ("autonomous_system_number", "asn", "as_number")
_ORGANISATION_KEYS = ("autonomous_system_organization", "as_name", "as_organization", "name", "organization")


def read_mmdb(path: Path, problems: list[FileProblem]) -> Iterator[RangeRow]:
    """Every network of a MaxMind-format ASN database, by its record's ``autonomous_system_number`` and
    ``autonomous_system_organization`` (GeoLite2-ASN, DB-IP) or ``asn`` ("AS123") and ``as_name`` or
    ``name`` (IPinfo). IPv4 networks of an IPv6 tree come out once, as family 4, whether the file stores
    them under ::/96 or ::ffff:0:0/96. A problem's line is the network's position in the file."""
    import maxminddb

    try:
        reader = maxminddb.open_database(str(path))
    except (maxminddb.InvalidDatabaseError, OSError) as exc:
        raise ValueError(f"not a MaxMind DB file ({exc})") from exc
    with reader:
        # The tree is walked in address order, so every network under ::/96 (which the reader gives as
        # IPv4) comes before any under ::ffff:0:0/96: the sorted IPv4 ranges seen so far tell whether a
        # mapped one is a repeat. Two 4-byte arrays, not a set of tuples: GeoLite2 has ~500,000 networks.
        seen_starts, seen_ends = array("I"), array("I")
        try:
            for number, (network, record) in enumerate(reader, start=1):
                first, last = int(network.network_address), int(network.broadcast_address)
                family = network.version
                if family == 6 and first >= MAPPED_FIRST and last <= MAPPED_LAST:
                    family, first, last = 4, first - MAPPED_FIRST, last - MAPPED_FIRST
                    if _seen(seen_starts, seen_ends, first, last):
                        continue
                elif family == 4:
                    seen_starts.append(first)
                    seen_ends.append(last)
                try:
                    row = _mmdb_row(family, first, last, record)
                except _BadRow as bad:
                    problems.append(FileProblem(number, bad.reason, f"{network}: {bad.message}"))
                    continue
                if row is not None:
                    yield row
        except maxminddb.InvalidDatabaseError as exc:
            raise ValueError(f"the MaxMind DB file is corrupt ({exc})") from exc


def _seen(starts: array[int], ends: array[int], first: int, last: int) -> bool:
    i = bisect_left(starts, first)
    return i < len(starts) and starts[i] == first and ends[i] == last


def _mmdb_row(family: int, first: int, last: int, record: Any) -> RangeRow | None:
    if not isinstance(record, Mapping):
        raise _BadRow("no_asn", "the record is not a map of fields")
    asn_value = next((record[key] for key in _ASN_KEYS if record.get(key) not in (None, "")), None)
    organisation = next(
        (str(record[key]).strip() for key in _ORGANISATION_KEYS if isinstance(record.get(key), str) and record[key]),
        None,
    )
    if asn_value is None and organisation is None:
        raise _BadRow("no_asn", "the record has no AS number or organisation (is this an ASN database?)")
    asn = _asn(asn_value) if asn_value is not None else None
    if asn == 0:
        return None
    return RangeRow(family, first, last, classify(asn, organisation) or "unknown", None, None, organisation, asn)
