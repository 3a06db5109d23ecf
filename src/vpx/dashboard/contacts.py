"""Contacts: search with filters and previews, reveal with the price shown before paying (D9, D10),
the revealed contacts with their CSV download (D30), and how many of them were suppressed since, with
their CSV."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import Path, Query, Request, Response
from fastapi.responses import RedirectResponse, StreamingResponse
from pydantic import ValidationError

from vpx.contacts import pricing
from vpx.contacts import service as contact_service
from vpx.contacts.schemas import ContactPreview, RevealedContact, SearchBody
from vpx.contacts.search import SearchQuery
from vpx.dashboard.pages import Page, dashboard_router, field_errors
from vpx.dashboard.sessions import UserForm
from vpx.dashboard.web import PageRefused, render
from vpx.db import AppDatabase, ReadSession, WriteSession
from vpx.deps import AppSettings, Now, Search
from vpx.errors import NotFound
from vpx.exports import contacts as contact_export
from vpx.exports.csvstream import csv_lines, csv_response
from vpx.geography import STATES, TERRITORIES
from vpx.ids import parse_number_id
from vpx.suppression import feed as suppression_feed
from vpx.verticals import VERTICALS

router = dashboard_router()

PAGE_SIZE = 25
REVEALED_PAGE = 50
MAX_ID = 2**63 - 1  # a BIGINT; larger numbers are a 422, not a database error
FILTERS = ("q", "state", "city", "industry", "specialty", "license_type")
ContactId = Annotated[str, Path(max_length=40)]


def _choices() -> dict[str, Any]:
    # Shown by name ("Colorado (CO)"), so in the order of their names.
    return {"states": sorted({**STATES, **TERRITORIES}.items(), key=lambda item: item[1]), "verticals": VERTICALS}


def _filter_values(request: Request) -> dict[str, str]:
    return {name: request.query_params.get(name, "").strip()[:200] for name in FILTERS}


@router.get("/contacts")
async def contacts_page(
    request: Request,
    user: Page,
    session: ReadSession,
    database: AppDatabase,
    settings: AppSettings,
    search: Search,
    page: Annotated[int, Query(ge=1, le=400)] = 1,
) -> Response:
    values = _filter_values(request)
    context: dict[str, Any] = {"title": "Contacts", "section": "contacts", "values": values, **_choices()}
    if not any(values.values()):
        return render(request, "contacts.html", {**context, "result": None, "errors": {}})
    try:
        body = SearchBody.model_validate(
            {
                "query": values["q"] or None,
                **{k: values[k] or None for k in FILTERS if k != "q"},
                "limit": PAGE_SIZE,
                "offset": (page - 1) * PAGE_SIZE,
            }
        )
    except ValidationError as exc:
        return render(request, "contacts.html", {**context, "result": None, "errors": field_errors(exc)}, status=422)
    query = SearchQuery(
        text=body.query,
        state=body.state,
        city=body.city,
        industry=body.industry,
        specialty=body.specialty,
        license_type=body.license_type,
        limit=PAGE_SIZE,
        offset=body.offset,
    )
    # The search on a replica when there are some; which of its contacts this account revealed, on
    # the primary (a contact revealed a moment ago shows as revealed).
    result = await database.replica_read(
        lambda connection: contact_service.search_contacts(connection, backend=search, query=query, settings=settings)
    )
    revealed = await contact_export.revealed_among(
        session, account_id=user.account_id, contact_ids=[c.id for c in result.contacts]
    )
    link = urlencode({k: v for k, v in values.items() if v})
    return render(
        request,
        "contacts.html",
        {
            **context,
            "result": result,
            "revealed": revealed,
            "errors": {},
            "page": page,
            "pages": (result.total + PAGE_SIZE - 1) // PAGE_SIZE,
            "link": link,
        },
    )


async def _contact_page(
    request: Request,
    session: Any,
    user: Any,
    contact_id: str,
    settings: AppSettings,
    now: Any,
    *,
    status: int = 200,
    **extra: Any,
) -> Response:
    contact = await contact_service.contact_for_account(
        session, account_id=user.account_id, contact_id=contact_id, now=now, settings=settings
    )
    charged = None
    if not isinstance(contact, ContactPreview):
        number = parse_number_id("ct", contact_id)
        reveal = await contact_service.find_reveal(session, account_id=user.account_id, contact_id=number or 0)
        charged = reveal.credits_charged if reveal is not None else None
    context = {"title": contact.business_name, "section": "contacts", "contact": contact, "charged": charged, **extra}
    return render(request, "contact.html", context, status=status)


@router.get("/contacts/{contact_id}")
async def contact_page(
    request: Request, contact_id: ContactId, user: Page, session: ReadSession, settings: AppSettings, now: Now
) -> Response:
    """A preview with its price and the button that pays it, or the full record once revealed."""
    just_revealed = request.query_params.get("revealed") == "1"
    return await _contact_page(request, session, user, contact_id, settings, now, just_revealed=just_revealed)


@router.post("/contacts/{contact_id}/reveal")
async def reveal(
    request: Request,
    contact_id: ContactId,
    user: Page,
    form: UserForm,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
) -> Response:
    """Pays the price the buyer saw: if it has changed since, nothing is charged and the new price shown."""
    try:
        current: ContactPreview | RevealedContact | None = await contact_service.contact_for_account(
            session, account_id=user.account_id, contact_id=contact_id, now=now, settings=settings
        )
    except NotFound:
        current = None  # gone, or suppressed: the reveal says which (404 or 451), charging nothing
    if current is None:
        await contact_service.reveal_contact(
            session,
            account_id=user.account_id,
            contact_id=contact_id,
            channel="reveal",
            ledger_kind="reveal",
            now=now,
            settings=settings,
        )
    elif isinstance(current, ContactPreview):
        try:
            seen = Decimal(str(form.get("expected_price") or ""))
        except InvalidOperation:
            seen = None
        if seen != current.reveal_cost:
            return await _contact_page(
                request, session, user, contact_id, settings, now, status=409, price_changed=True
            )
        await contact_service.reveal_contact(
            session,
            account_id=user.account_id,
            contact_id=contact_id,
            channel="reveal",
            ledger_kind="reveal",
            now=now,
            settings=settings,
        )
    return RedirectResponse(f"/dashboard/contacts/{contact_id}?revealed=1", status_code=303)


@router.get("/revealed")
async def revealed_page(
    request: Request,
    user: Page,
    session: ReadSession,
    search: Search,
    after: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
) -> Response:
    values = _filter_values(request)
    context: dict[str, Any] = {"title": "Revealed contacts", "section": "revealed", "values": values, **_choices()}
    try:
        filters = contact_export.RevealedFilters(**{k: v or None for k, v in values.items()})
    except ValidationError as exc:
        return render(request, "revealed.html", {**context, "rows": [], "errors": field_errors(exc)}, status=422)
    query = await contact_export.plan_revealed_query(
        session, account_id=user.account_id, filters=filters, search=search
    )
    batch = await contact_export.revealed_page(session, query, after=after, limit=REVEALED_PAGE + 1)
    link = urlencode({k: v for k, v in values.items() if v})
    more = len(batch.rows) > REVEALED_PAGE
    rows = batch.rows[:REVEALED_PAGE]
    return render(
        request,
        "revealed.html",
        {
            **context,
            "rows": [_revealed_row(row, batch.marks.get(row.id)) for row in rows],
            "errors": {},
            "link": link,
            "next_after": rows[-1].id if more and rows else None,
            "csv_url": "/dashboard/exports/contacts.csv" + (f"?{link}" if link else ""),
            "suppressed": await suppression_feed.suppressed_count(session, account_id=user.account_id),
        },
    )


def _revealed_row(row: Any, mark: tuple[str, Any] | None) -> dict[str, Any]:
    """A revealed contact as the list shows it: values found bad withheld, the email's status, and
    the suppression mark (reason and since when) of a contact put on the list since."""
    bad = contact_export.withheld(row)
    return {
        "id": row.id,
        "business_name": row.business_name,
        "phone": None if bad & pricing.FIELD_BITS["phone"] else row.phone,
        "email": None if bad & pricing.FIELD_BITS["email"] else row.email,
        "email_status": row.email_status if row.email is not None else None,
        "city": row.city,
        "state": row.state,
        "industry": row.industry,
        "revealed_at": row.revealed_at,
        "suppressed": {"reason": mark[0], "since": mark[1]} if mark else None,
    }


@router.get("/exports/suppressed.csv")
async def export_suppressed(request: Request, user: Page) -> StreamingResponse:
    """The contacts this account revealed that were suppressed since, newest first (as the API's feed)."""
    batches = suppression_feed.csv_batches(request.app.state.database, account_id=user.account_id)
    return csv_response("suppressed.csv", csv_lines(suppression_feed.CSV_COLUMNS, batches))


@router.get("/exports/contacts.csv")
async def export_contacts(request: Request, user: Page, session: ReadSession, search: Search) -> StreamingResponse:
    """The same export as GET /api/v1/exports/contacts.csv, for the signed-in account."""
    values = _filter_values(request)
    try:
        filters = contact_export.RevealedFilters(**{k: v or None for k, v in values.items()})
    except ValidationError as exc:
        detail = "; ".join(f"{k}: {v}" for k, v in field_errors(exc).items())
        raise PageRefused(422, "Invalid filters", detail) from exc
    query = await contact_export.plan_revealed_query(
        session, account_id=user.account_id, filters=filters, search=search
    )
    batches = contact_export.revealed_csv_batches(request.app.state.database, query)
    return csv_response("contacts.csv", csv_lines(contact_export.COLUMNS, batches))
