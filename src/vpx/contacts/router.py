"""/api/v1/contacts: search, view, reveal."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncConnection

from vpx.auth.dependencies import BuyCaller, ReadCaller
from vpx.config import Settings
from vpx.contacts import service as contact_service
from vpx.contacts.schemas import (
    ContactPreview,
    RevealedContact,
    RevealedContactView,
    RevealRequest,
    SearchBody,
    SearchFilters,
    SearchResult,
)
from vpx.contacts.search import SearchQuery
from vpx.db import ReadSession, WriteSession, get_database
from vpx.deps import AppSettings, Now, Search
from vpx.enrichment import service as enrichment_service
from vpx.errors import problem_responses
from vpx.fields import SingleLine
from vpx.idempotency.service import HEADER as IDEMPOTENCY_HEADER
from vpx.idempotency.service import run_idempotent
from vpx.money import credits_header

router = APIRouter(prefix="/api/v1/contacts", tags=["contacts"])

READ_ERRORS = problem_responses(401, 403, 422, 429)
REVEAL_ERRORS = problem_responses(400, 401, 402, 403, 404, 409, 413, 422, 429, 451)
ContactId = Annotated[str, Path(max_length=40, examples=["ct_1042"], description="`ct_<id>`")]


class SearchParams(SearchFilters):
    # An unknown parameter (a typo such as `limt`) is a 422, never silently ignored.
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    q: SingleLine | None = Field(default=None, max_length=200, description="Business name, category or keyword.")


def _query(filters: SearchFilters, text: str | None) -> SearchQuery:
    return SearchQuery(
        text=text or None,
        state=filters.state,
        city=filters.city or None,
        industry=filters.industry,
        specialty=filters.specialty or None,
        license_type=filters.license_type or None,
        limit=filters.limit,
        offset=filters.offset,
        email_status=filters.email_status,
        postal_code=filters.postal_code,
        exclude_dnc=filters.exclude_dnc,
    )


async def _search(request: Request, search: Search, settings: Settings, query: SearchQuery) -> Response:
    # A bare connection, not an ORM session (nothing is loaded into one), and the envelope
    # serialised once here rather than validated again against the response model. On a replica
    # when there are some: a contact written a moment ago may show a moment later.
    database = get_database(request)

    async def read(connection: AsyncConnection) -> bytes:
        return await contact_service.search_contacts_json(connection, backend=search, query=query, settings=settings)

    body = await database.replica_read(read)
    return Response(body, media_type="application/json")


@router.get("/search", response_model=SearchResult, responses=READ_ERRORS, summary="Search contacts")
async def search_get(
    params: Annotated[SearchParams, Query()],
    caller: ReadCaller,
    request: Request,
    settings: AppSettings,
    search: Search,
) -> Response:
    """Full-text search with typo tolerance and prefix matching, best matches first; previews are free."""
    return await _search(request, search, settings, _query(params, params.q))


@router.post(
    "/search",
    response_model=SearchResult,
    responses=problem_responses(400, 401, 403, 413, 422, 429),
    summary="Search contacts (JSON body)",
)
async def search_post(
    body: SearchBody, caller: ReadCaller, request: Request, settings: AppSettings, search: Search
) -> Response:
    """The same engine and envelope as GET; `query` (or `q`) and the same filters in the body."""
    return await _search(request, search, settings, _query(body, body.query or body.q))


async def _reveal(
    request: Request,
    caller: BuyCaller,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
    contact_id: str,
) -> Response:
    # Without an idempotency key nothing else is written in the request's transaction (D12's stored
    # response is), so the reveal may read outside it and charge in a statement of its own.
    standalone = None if request.headers.get(IDEMPOTENCY_HEADER) else get_database(request)

    async def handler() -> Response:
        outcome = await contact_service.reveal_contact(
            session,
            account_id=caller.account_id,
            contact_id=contact_id,
            channel="reveal",
            ledger_kind="reveal",
            now=now,
            settings=settings,
            standalone=standalone,
        )
        return JSONResponse(
            outcome.contact.model_dump(mode="json"),
            headers={
                "X-Credits-Charged": credits_header(outcome.charged),
                "X-Credits-Remaining": credits_header(outcome.remaining),
            },
        )

    return await run_idempotent(request, session, account_id=caller.account_id, handler=handler)


@router.post("/reveal", response_model=RevealedContact, responses=REVEAL_ERRORS, summary="Reveal a contact")
async def reveal(
    body: RevealRequest,
    request: Request,
    caller: BuyCaller,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
) -> Response:
    """The suppression check, then the contact's price (`reveal_cost` in its preview); a contact this
    account revealed before is returned again for nothing. Accepts `Idempotency-Key`: a repeat with the
    same key and body within 24 hours returns the first response and charges nothing more."""
    return await _reveal(request, caller, session, settings, now, body.contact_id)


@router.post(
    "/{contact_id}/reveal",
    response_model=RevealedContact,
    responses=REVEAL_ERRORS,
    summary="Reveal a contact (id in the path)",
)
async def reveal_by_path(
    contact_id: ContactId,
    request: Request,
    caller: BuyCaller,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
) -> Response:
    return await _reveal(request, caller, session, settings, now, contact_id)


@router.get(
    "/{contact_id}",
    response_model=RevealedContactView | ContactPreview,
    responses=problem_responses(401, 403, 404, 422, 429),
    summary="Get a contact",
)
async def get_contact(
    contact_id: ContactId, caller: ReadCaller, session: ReadSession, settings: AppSettings, now: Now
) -> RevealedContactView | ContactPreview:
    """The full record to an account that revealed it, else the preview; for a revealed contact, also
    what the account enriched with its own provider keys, beside the registry's values."""
    found = await contact_service.contact_for_account(
        session, account_id=caller.account_id, contact_id=contact_id, now=now, settings=settings
    )
    if not isinstance(found, RevealedContact):
        return found
    enriched = await enrichment_service.enrichment_of(session, account_id=caller.account_id, public_id=contact_id)
    has_values = enriched.fields or any(p.fields for p in enriched.decision_makers)
    return RevealedContactView(**found.model_dump(), enrichment=enriched if has_values else None)
