"""RFC 4180 CSV, written batch by batch: UTF-8, CRLF line ends, a header row, fields quoted when
they hold a comma, a quote or a line break. Memory holds one batch at a time, whatever the size."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from decimal import Decimal

from fastapi.responses import StreamingResponse

from vpx.money import credits_header

CSV_MEDIA_TYPE = "text/csv; charset=utf-8; header=present"
# Spreadsheets run a cell that starts with one of these as a formula (CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

Cell = str | int | Decimal | datetime | None


def neutralised(value: str) -> str:
    """A free-text value that a spreadsheet will show, not run: a leading formula character gets a
    quote mark before it (OWASP's advice). Never used on phone numbers, whose "+" is meaningful."""
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def cell(value: Cell) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, Decimal):
        return credits_header(value)
    return str(value)


def encode_rows(rows: Sequence[Sequence[str]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, dialect="excel", lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


async def csv_lines(header: Sequence[str], batches: AsyncIterator[list[list[str]]]) -> AsyncIterator[bytes]:
    """The header row, then one chunk of bytes per batch of rows."""
    yield encode_rows([list(header)])
    async for batch in batches:
        if batch:
            yield encode_rows(batch)


def csv_response(filename: str, body: AsyncIterator[bytes]) -> StreamingResponse:
    return StreamingResponse(
        body,
        media_type=CSV_MEDIA_TYPE,
        headers={
            "Content-Disposition": f'attachment; filename="{filename}"',
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
        },
    )
