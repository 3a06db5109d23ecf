"""/api/v1/exports: CSV downloads for Standard and Full Access keys (D4, D30)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from vpx.auth.dependencies import BuyCaller
from vpx.db import ReadSession, get_database
from vpx.deps import Search
from vpx.errors import problem_responses
from vpx.exports import contacts as contact_export
from vpx.exports import signals as signal_export
from vpx.exports.csvstream import csv_lines, csv_response

router = APIRouter(prefix="/api/v1/exports", tags=["exports"])


def _csv_ok(description: str, columns: tuple[str, ...]) -> dict[int | str, dict[str, Any]]:
    header = ",".join(columns)
    return {
        200: {
            "description": f"{description} RFC 4180, UTF-8, CRLF line ends; header row: `{header}`.",
            "content": {"text/csv": {"schema": {"type": "string"}}},
        },
        **problem_responses(401, 403, 422, 429),
    }


@router.get(
    "/contacts.csv",
    response_class=StreamingResponse,
    responses=_csv_ok("The account's revealed contacts, in id order.", contact_export.COLUMNS),
    summary="Export revealed contacts as CSV",
)
async def export_contacts(
    filters: Annotated[contact_export.RevealedFilters, Query()],
    request: Request,
    caller: BuyCaller,
    session: ReadSession,
    search: Search,
) -> StreamingResponse:
    """Every contact this account has revealed, with full details, filtered like a search; streamed
    whatever the size."""
    query = await contact_export.plan_revealed_query(
        session, account_id=caller.account_id, filters=filters, search=search
    )
    batches = contact_export.revealed_csv_batches(get_database(request), query)
    return csv_response("contacts.csv", csv_lines(contact_export.COLUMNS, batches))


@router.get(
    "/signals.csv",
    response_class=StreamingResponse,
    responses=_csv_ok("The signals the query returns, newest first.", signal_export.COLUMNS),
    summary="Export signals as CSV",
)
async def export_signals(
    filters: Annotated[signal_export.SignalFilters, Query()], request: Request, caller: BuyCaller
) -> StreamingResponse:
    """The signals a `GET /signals` query returns (every page), streamed whatever their number."""
    batches = signal_export.signal_csv_batches(get_database(request), filters)
    return csv_response("signals.csv", csv_lines(signal_export.COLUMNS, batches))
