"""Files as the publishers ship them, written by the tests: NPPES data zips (monthly and weekly, with
the companion files CMS packs beside the data), the deactivation report (a zipped .xlsx), and CMS's
download page linking them."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from tests.registries.formats import csv_text, nppes_header, nppes_row


def nppes_csv(rows: list[dict[str, Any]], *, layout: str = "current") -> bytes:
    header = nppes_header(layout)
    return csv_text(header, [nppes_row(header, **row) for row in rows]).encode("ascii")


def nppes_zip(rows: list[dict[str, Any]], *, first: str, last: str, data: bytes | None = None) -> bytes:
    """A data dissemination zip: ``npidata_pfile_<first>-<last>.csv`` with its header file, the other
    files of the package and a readme, as CMS packs them."""
    body = data if data is not None else nppes_csv(rows)
    header_line = body.split(b"\n", 1)[0] + b"\n"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"npidata_pfile_{first}-{last}.csv", body)
        archive.writestr(f"npidata_pfile_{first}-{last}_fileheader.csv", header_line)
        archive.writestr(f"othername_pfile_{first}-{last}.csv", b'"NPI","Provider Other Organization Name"\n')
        archive.writestr(f"pl_pfile_{first}-{last}.csv", b'"NPI","Provider Secondary Practice Location Address"\n')
        archive.writestr(f"endpoint_pfile_{first}-{last}.csv", b'"NPI","Endpoint Type"\n')
        archive.writestr("NPPES_Data_Dissemination_Readme.pdf", b"%PDF-1.4 readme\n")
    return out.getvalue()


def xlsx(rows: list[list[str]]) -> bytes:
    """A one-sheet workbook of text cells (shared strings, as Excel writes them)."""
    strings: list[str] = []
    index: dict[str, int] = {}
    sheet_rows = []
    for r, row in enumerate(rows, start=1):
        cells = []
        for c, value in enumerate(row):
            if value not in index:
                index[value] = len(strings)
                strings.append(value)
            cells.append(f'<c r="{chr(65 + c)}{r}" t="s"><v>{index[value]}</v></c>')
        sheet_rows.append(f'<row r="{r}">{"".join(cells)}</row>')
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    parts = {
        "[Content_Types].xml": '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
        'package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/></Types>',
        "_rels/.rels": '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/'
        'package/2006/relationships"><Relationship Id="rId1" Target="xl/workbook.xml" Type="officeDocument"/>'
        "</Relationships>",
        "xl/workbook.xml": f'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{main}" xmlns:r="{rel}"><sheets>'
        '<sheet name="Deactivated NPIs" sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.'
        'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Target="worksheets/sheet1.xml" '
        'Type="worksheet"/></Relationships>',
        "xl/worksheets/sheet1.xml": f'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{main}"><sheetData>'
        f"{''.join(sheet_rows)}</sheetData></worksheet>",
        "xl/sharedStrings.xml": f'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="{main}" count="{len(strings)}">'
        + "".join(f"<si><t>{escape(s)}</t></si>" for s in strings)
        + "</sst>",
    }
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return out.getvalue()


def deactivation_zip(deactivated: list[tuple[str, str]], *, day: str) -> bytes:
    """The monthly deactivation report: a zip holding one .xlsx, a title row, a header, then each NPI
    with its deactivation date (MM/DD/YYYY)."""
    rows = [["NPPES Deactivated NPI Report"], ["NPI", "NPPES Deactivation Date"], *[[n, d] for n, d in deactivated]]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"NPPES Deactivated NPI Report {day}.xlsx", xlsx(rows))
    return out.getvalue()


def npi_files_page(names: list[str]) -> bytes:
    """CMS's NPI_Files.html: relative, single-quoted links with a ./ prefix, among other links."""
    links = "\n".join(f"<li><a href='./{name}'>{name}</a></li>" for name in names)
    return (
        "<html><head><title>NPPES Downloadable File</title></head><body>"
        "<p><a href='https://www.cms.gov/'>CMS</a> <a href='./NPPES_Data_Dissemination_Readme.pdf'>Readme</a></p>"
        f"<ul>\n{links}\n</ul></body></html>"
    ).encode()


def write_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in members.items():
            archive.writestr(name, body)
    return path
