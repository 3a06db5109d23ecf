"""The shared reader: encodings (Windows-1252, BOM), bad rows skipped with a reason, cut-off and
binary files refused clearly."""

from __future__ import annotations

from pathlib import Path

import pytest

from vpx.registries.reader import CsvRow, CsvTable, ImportFailed, SkipRow, detect_encoding, open_text


def _rows(path: Path) -> tuple[CsvTable, list[CsvRow | SkipRow]]:
    opened = open_text(path)
    table = CsvTable(opened)
    rows = list(table.rows())
    opened.close()
    return table, rows


def test_windows_1252_is_detected_and_decoded(tmp_path: Path) -> None:
    path = tmp_path / "nucc.csv"
    path.write_bytes(
        "Code,Definition\r\n101Y00000X,\u201cA master\u2019s degree\u201d \u2013 \u00a7 2\r\n".encode("cp1252")
    )
    assert detect_encoding(path.read_bytes()) == "cp1252"
    table, rows = _rows(path)
    assert table.header == ["Code", "Definition"]
    assert isinstance(rows[0], CsvRow)
    assert rows[0].values == ["101Y00000X", "\u201cA master\u2019s degree\u201d \u2013 \u00a7 2"]


def test_a_bom_is_not_part_of_the_first_column_name(tmp_path: Path) -> None:
    path = tmp_path / "ppp.csv"
    path.write_bytes(b"\xef\xbb\xbfLoanRange,BusinessName\r\na $5-10 million,ACME\r\n")
    table, _ = _rows(path)
    assert table.header == ["LoanRange", "BusinessName"]
    assert table.position("LoanRange") == 0


def test_a_stray_windows_1252_byte_in_a_utf8_file_does_not_stop_the_read(tmp_path: Path) -> None:
    head = "Name,City\n" + "".join(f"Caf\u00e9 {i},Paris\n" for i in range(5000))
    path = tmp_path / "mixed.csv"
    path.write_bytes(head.encode("utf-8") + b"O\x92Brien Dental,Boston\n")
    _, rows = _rows(path)
    last = rows[-1]
    assert isinstance(last, CsvRow) and last.values == ["O\u2019Brien Dental", "Boston"]


def test_a_short_row_is_skipped_and_a_cut_off_last_row_marks_the_file_truncated(tmp_path: Path) -> None:
    path = tmp_path / "cut.csv"
    path.write_text('"A","B","C"\n"1","2","3"\n"4","5"\n"7","8","9"\n"10","1')
    table, rows = _rows(path)
    kinds = [r.reason if isinstance(r, SkipRow) else "row" for r in rows]
    assert kinds == ["row", "malformed_row", "row", "truncated_row"]
    assert table.truncated


def test_a_binary_file_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    path = tmp_path / "npidata.csv"
    path.write_bytes(b"PK\x03\x04\x00\x00binary zip")
    with pytest.raises(ImportFailed) as failure:
        open_text(path)
    assert failure.value.code == "not_text"


def test_an_empty_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    with pytest.raises(ImportFailed) as failure:
        CsvTable(open_text(path))
    assert failure.value.code == "empty_file"
