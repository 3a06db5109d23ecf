"""The readers of the operator's range files: CSV, ip2asn TSV (plain and gzipped) and MaxMind DB.

Fixtures use documentation addresses only (RFC 5737, RFC 3849), documentation AS numbers (RFC 5398)
for made-up networks and ``.example`` domains."""

from __future__ import annotations

import gzip
import ipaddress
from pathlib import Path
from typing import Any

import pytest
from mmdb_writer import MMDBWriter
from netaddr import IPSet

from vpx.visitors.range_files import FileProblem, RangeRow, nothing_read, read_csv, read_iptoasn, read_mmdb


def span(first: str, last: str) -> tuple[int, int, int]:
    a, b = ipaddress.ip_address(first), ipaddress.ip_address(last)
    return a.version, int(a), int(b)


def csv_rows(tmp_path: Path, text: str, *, encoding: str = "utf-8") -> tuple[list[RangeRow], list[FileProblem]]:
    path = tmp_path / "ranges.csv"
    path.write_text(text, encoding=encoding)
    problems: list[FileProblem] = []
    return list(read_csv(path, problems)), problems


# --- csv -------------------------------------------------------------------------------------------


def test_csv_networks_with_domains_and_contact_ids(tmp_path: Path) -> None:
    rows, problems = csv_rows(
        tmp_path,
        "network,domain,contact_id,organisation\n"
        "192.0.2.0/24,https://www.acme.example/about,,Acme Widgets\n"
        "2001:db8:10::/48,,ct_42,\n"
        "198.51.100.7,beta.example,17,Beta\n",
    )
    assert problems == []
    assert rows == [
        RangeRow(*span("192.0.2.0", "192.0.2.255"), "business", "acme.example", None, "Acme Widgets", None),
        RangeRow(*span("2001:db8:10::", "2001:db8:10:ffff:ffff:ffff:ffff:ffff"), "business", None, 42, None, None),
        RangeRow(*span("198.51.100.7", "198.51.100.7"), "business", "beta.example", 17, "Beta", None),
    ]


def test_csv_start_and_end_addresses_with_bom(tmp_path: Path) -> None:
    rows, problems = csv_rows(
        tmp_path,
        "Start_IP,End_IP,Domain,Organization\n203.0.113.10,203.0.113.20,gamma.example,Gamma\n",
        encoding="utf-8-sig",
    )
    assert problems == []
    assert rows == [RangeRow(*span("203.0.113.10", "203.0.113.20"), "business", "gamma.example", None, "Gamma", None)]


def test_csv_bad_rows_are_reported_by_line_and_skipped(tmp_path: Path) -> None:
    rows, problems = csv_rows(
        tmp_path,
        "network,start_ip,end_ip,domain,contact_id\n"
        "192.0.2.0/24,,,acme.example,\n"  # line 2: good
        "192.0.2.0/33,,,acme.example,\n"  # 3
        "192.0.2.5/24,,,acme.example,\n"  # 4
        ",198.51.100.20,198.51.100.10,acme.example,\n"  # 5
        ",198.51.100.1,2001:db8::1,acme.example,\n"  # 6
        ",198.51.100.x,198.51.100.9,acme.example,\n"  # 7
        "203.0.113.0/24,,,,\n"  # 8
        "203.0.113.0/24,,,,ct_abc\n"  # 9
        "203.0.113.0/24,,,,0\n"  # 10
        "203.0.113.0/24,,,not a domain,\n"  # 11
        "\n"  # 12: blank, skipped silently
        "# a comment,,,,\n"  # 13: skipped silently
        ",,,acme.example,\n"  # 14
        ",198.51.100.1,198.51.100.1,ACME.example,\n",  # 15: good
    )
    assert [(p.line, p.reason) for p in problems] == [
        (3, "invalid_network"),
        (4, "host_bits_set"),
        (5, "reversed_range"),
        (6, "mixed_family"),
        (7, "invalid_address"),
        (8, "no_business"),
        (9, "invalid_contact_id"),
        (10, "invalid_contact_id"),
        (11, "invalid_domain"),
        (14, "invalid_network"),
    ]
    assert "192.0.2.0/24" in problems[1].message  # the network the operator may have meant
    assert [(r.start, r.domain) for r in rows] == [
        (span("192.0.2.0", "192.0.2.0")[1], "acme.example"),
        (span("198.51.100.1", "198.51.100.1")[1], "acme.example"),
    ]


@pytest.mark.parametrize(
    "header",
    ["domain,contact_id\n", "network,organisation\n", "start_ip,domain\n", ""],
)
def test_csv_without_the_needed_columns_is_refused(tmp_path: Path, header: str) -> None:
    with pytest.raises(ValueError):
        csv_rows(tmp_path, header + "192.0.2.0/24,acme.example\n" if header else "")


# --- iptoasn ---------------------------------------------------------------------------------------

IP2ASN = (
    "0.0.0.0\t0.255.255.255\t0\tNone\tNot routed\n"
    "192.0.2.0\t192.0.2.255\t7922\tUS\tCOMCAST-7922\n"
    "198.51.100.0\t198.51.100.255\t16509\tUS\tAMAZON-02\n"
    "203.0.113.0\t203.0.113.127\t64496\tUS\tEXAMPLE-WIDGETS - Example Widgets Inc\n"
    "203.0.113.128\t203.0.113.255\t64497\tGB\tEXAMPLE-BB Example Broadband Ltd\n"
    "2001:db8::\t2001:db8:ffff:ffff:ffff:ffff:ffff:ffff\t64498\tDE\tExample Hosting GmbH\n"
    "2001:db9::\t2001:db9::ff\t0\tNone\tNot routed\n"
    "203.0.113.0\t203.0.113.1\tASX\tUS\tbad\n"
    "oops\n"
)


@pytest.mark.parametrize("gzipped", [False, True])
def test_iptoasn_rows_get_their_kind(tmp_path: Path, gzipped: bool) -> None:
    path = tmp_path / ("ip2asn-combined.tsv.gz" if gzipped else "ip2asn-combined.tsv")
    if gzipped:
        with gzip.open(path, "wt", encoding="utf-8") as file:
            file.write(IP2ASN)
    else:
        path.write_text(IP2ASN, encoding="utf-8")
    problems: list[FileProblem] = []
    rows = list(read_iptoasn(path, problems))
    assert [(r.family, r.start, r.end, r.kind, r.asn, r.organisation) for r in rows] == [
        (*span("192.0.2.0", "192.0.2.255"), "isp", 7922, "COMCAST-7922"),
        (*span("198.51.100.0", "198.51.100.255"), "hosting", 16509, "AMAZON-02"),
        (*span("203.0.113.0", "203.0.113.127"), "unknown", 64496, "EXAMPLE-WIDGETS - Example Widgets Inc"),
        (*span("203.0.113.128", "203.0.113.255"), "isp", 64497, "EXAMPLE-BB Example Broadband Ltd"),
        (*span("2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"), "hosting", 64498, "Example Hosting GmbH"),
    ]
    assert all(r.domain is None and r.contact_id is None for r in rows)
    # AS 0 rows are skipped without a problem; the bad ones are reported by line.
    assert [(p.line, p.reason) for p in problems] == [(8, "invalid_asn"), (9, "invalid_line")]


# --- mmdb ------------------------------------------------------------------------------------------


def test_mmdb_geolite2_style_with_ipv4_and_ipv6(tmp_path: Path) -> None:
    writer = MMDBWriter(ip_version=6, ipv4_compatible=True, database_type="GeoLite2-ASN")
    records: dict[str, dict[str, Any]] = {
        "192.0.2.0/24": {"autonomous_system_number": 7922, "autonomous_system_organization": "Comcast Cable"},
        "198.51.100.0/25": {"autonomous_system_number": 64496, "autonomous_system_organization": "Example Widgets"},
        "2001:db8::/33": {"autonomous_system_number": 64497, "autonomous_system_organization": "Example Hosting"},
        "2001:db8:8000::/33": {"autonomous_system_number": 0},  # not routed: skipped, no problem
        "203.0.113.0/24": {"city": "Nowhere"},
    }
    for network, record in records.items():
        writer.insert_network(IPSet([network]), record)
    path = tmp_path / "GeoLite2-ASN.mmdb"
    writer.to_db_file(str(path))
    problems: list[FileProblem] = []
    rows = sorted(read_mmdb(path, problems), key=lambda r: (r.family, r.start))
    assert [(r.family, r.start, r.end, r.kind, r.asn, r.organisation) for r in rows] == [
        (*span("192.0.2.0", "192.0.2.255"), "isp", 7922, "Comcast Cable"),
        (*span("198.51.100.0", "198.51.100.127"), "unknown", 64496, "Example Widgets"),
        (*span("2001:db8::", "2001:db8:7fff:ffff:ffff:ffff:ffff:ffff"), "hosting", 64497, "Example Hosting"),
    ]
    assert [p.reason for p in problems] == ["no_asn"]  # the record without an AS number


def test_mmdb_ipinfo_style_ipv4_mapped_networks_come_out_once_as_ipv4(tmp_path: Path) -> None:
    # The same IPv4 network stored under ::/96 and ::ffff:0:0/96, as some writers do without aliases;
    # another stored only under ::ffff:0:0/96.
    writer = MMDBWriter(ip_version=6, ipv4_compatible=False, database_type="ipinfo asn.mmdb")
    writer.insert_network(IPSet(["::192.0.2.0/120"]), {"asn": "AS64496", "as_name": "Example Widgets"})
    writer.insert_network(IPSet(["::ffff:192.0.2.0/120"]), {"asn": "AS64496", "as_name": "Example Widgets"})
    writer.insert_network(IPSet(["::ffff:198.51.100.0/120"]), {"asn": "AS64497", "name": "Example Broadband"})
    writer.insert_network(IPSet(["2001:db8::/32"]), {"asn": "AS14061", "as_name": "DigitalOcean, LLC"})
    path = tmp_path / "asn.mmdb"
    writer.to_db_file(str(path))
    problems: list[FileProblem] = []
    rows = list(read_mmdb(path, problems))
    assert problems == []
    assert sorted((r.family, r.start, r.end, r.kind, r.asn) for r in rows) == [
        (*span("192.0.2.0", "192.0.2.255"), "unknown", 64496),
        (*span("198.51.100.0", "198.51.100.255"), "isp", 64497),
        (*span("2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"), "hosting", 14061),
    ]


def test_mmdb_ipv4_only_database(tmp_path: Path) -> None:
    writer = MMDBWriter(ip_version=4, database_type="DBIP-ASN-Lite")
    writer.insert_network(
        IPSet(["203.0.113.0/25"]), {"autonomous_system_number": 64498, "autonomous_system_organization": "Example VPS"}
    )
    path = tmp_path / "dbip-asn-lite.mmdb"
    writer.to_db_file(str(path))
    problems: list[FileProblem] = []
    assert list(read_mmdb(path, problems)) == [
        RangeRow(*span("203.0.113.0", "203.0.113.127"), "hosting", None, None, "Example VPS", 64498)
    ]


def test_not_an_mmdb_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ranges.csv"
    path.write_text("network,domain\n192.0.2.0/24,acme.example\n", encoding="utf-8")
    with pytest.raises(ValueError):
        list(read_mmdb(path, []))


def test_a_file_with_no_readable_row_is_refused_naming_its_lines_and_values(tmp_path: Path) -> None:
    rows, problems = csv_rows(tmp_path, "network,domain\n# a comment\n10.0.0.0/33,a.example\n")
    assert rows == []
    assert nothing_read(problems, "csv") == (
        "no range could be read: line 3: not a network: '10.0.0.0/33' (1 bad row; is --format csv right?)"
    )
    many = [FileProblem(n, "no_asn", f"192.0.2.{n}/32: no AS number") for n in range(1, 6)]
    message = nothing_read(many, "mmdb")
    assert message.startswith("no range could be read: record 1: 192.0.2.1/32: no AS number; record 2:")
    assert "record 4" not in message and "; 2 more (5 bad rows;" in message
