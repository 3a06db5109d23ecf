"""/api/v1/visitors: the account's sites (Full Access), server-side identification (Full Access), and
its visits and the companies behind them (any key) (D33)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response

from vpx.auth.dependencies import ManageCaller, ReadCaller
from vpx.db import ReadSession, WriteSession
from vpx.deps import AppSettings, Now, mode_part
from vpx.errors import InvalidParameters, problem_responses
from vpx.fields import Timestamp
from vpx.visitors import service
from vpx.visitors.addresses import clean_url, parse_visitor
from vpx.visitors.resolution import VisitorResolver
from vpx.visitors.schemas import (
    SITE_ID_PATTERN,
    CompanyList,
    Identification,
    IdentifyRequest,
    SiteCreate,
    SiteList,
    SiteView,
    VisitPage,
)

router = APIRouter(prefix="/api/v1/visitors", tags=["visitors"])
SiteId = Annotated[str, Path(max_length=40, pattern=SITE_ID_PATTERN, examples=["site_3kTz9aQ1xYb2LmN0"])]


def resolver_of(request: Request) -> VisitorResolver:
    found: VisitorResolver = mode_part(request, "visitors")
    return found


@router.post(
    "/sites",
    status_code=201,
    response_model=SiteView,
    responses=problem_responses(400, 401, 403, 409, 413, 422, 429),
    summary="Register a site",
)
async def create_site(
    body: SiteCreate, caller: ManageCaller, session: WriteSession, settings: AppSettings, now: Now
) -> SiteView:
    """A site of the account, with its public `site_key` and the snippet to paste into its pages. An
    account has at most 100 sites: a 409 (`conflict`) past that; delete one first."""
    site = await service.create_site(session, account_id=caller.account_id, body=body, now=now)
    return service.site_view(site, settings.public_url)


@router.get("/sites", response_model=SiteList, responses=problem_responses(401, 403, 422, 429), summary="List sites")
async def list_sites(
    caller: ManageCaller,
    session: ReadSession,
    settings: AppSettings,
    limit: Annotated[int, Query(ge=1, le=service.MAX_SITES_PER_ACCOUNT, description="Page size, 1–100.")] = 100,
    cursor: Annotated[str | None, Query(max_length=200, description="From a previous page.")] = None,
) -> SiteList:
    """The account's sites, oldest first; `next_cursor` gives the next page (the default page holds
    every site an account may have)."""
    sites, next_cursor = await service.list_sites(session, account_id=caller.account_id, limit=limit, cursor=cursor)
    return SiteList(sites=[service.site_view(s, settings.public_url) for s in sites], next_cursor=next_cursor)


@router.get(
    "/sites/{site_id}", response_model=SiteView, responses=problem_responses(401, 403, 404, 429), summary="One site"
)
async def get_site(site_id: SiteId, caller: ManageCaller, session: ReadSession, settings: AppSettings) -> SiteView:
    site = await service.get_site(session, account_id=caller.account_id, site_id=site_id)
    return service.site_view(site, settings.public_url)


@router.delete(
    "/sites/{site_id}", status_code=204, responses=problem_responses(401, 403, 404, 429), summary="Delete a site"
)
async def delete_site(site_id: SiteId, caller: ManageCaller, session: WriteSession) -> Response:
    """Deletes the site and its visits; its key stops collecting at once."""
    site = await service.get_site(session, account_id=caller.account_id, site_id=site_id)
    await service.delete_site(session, site)
    return Response(status_code=204)


@router.post(
    "/identify",
    response_model=Identification,
    response_model_exclude_none=True,
    responses=problem_responses(400, 401, 403, 404, 413, 422, 429),
    summary="Identify a visit reported by your server",
)
async def identify(
    body: IdentifyRequest, request: Request, caller: ManageCaller, session: WriteSession, now: Now
) -> Identification:
    """Resolves the visitor's address to a business of the catalogue, records the visit and, when it is
    identified, raises `visitor.identified` (at most once per business, site and 30 minutes)."""
    site = await service.get_site(session, account_id=caller.account_id, site_id=body.site_id)
    address = parse_visitor(body.ip)
    if address is None:
        raise InvalidParameters.field("ip", "must be an IPv4 or IPv6 address")
    url = clean_url(body.url)
    if url is None:
        raise InvalidParameters.field("url", "must be a URL")
    resolution = await resolver_of(request).resolve(session, address, user_agent=body.user_agent, opted_out=False)
    visit = await service.record_visit(
        session,
        site=site,
        resolution=resolution,
        url=url,
        referrer=clean_url(body.referrer) if body.referrer else None,
        title=None,
        channel="server",
        occurred_at=body.occurred_at or now,
        now=now,
    )
    return service.identification(visit, resolution.contact)


@router.get(
    "/visits",
    response_model=VisitPage,
    responses=problem_responses(401, 403, 404, 422, 429),
    summary="Visits, newest first",
)
async def list_visits(
    caller: ReadCaller,
    session: ReadSession,
    site_id: Annotated[str | None, Query(max_length=40, pattern=SITE_ID_PATTERN)] = None,
    identified: bool | None = None,
    since: Annotated[Timestamp | None, Query(description="Only visits at or after this time.")] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 50,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> VisitPage:
    """The account's visits, newest `occurred_at` first; `next_cursor` gives the next page."""
    visits, next_cursor = await service.list_visits(
        session,
        account_id=caller.account_id,
        site_id=site_id,
        identified=identified,
        since=since,
        limit=limit,
        cursor=cursor,
    )
    return VisitPage(visits=visits, next_cursor=next_cursor)


@router.get(
    "/companies",
    response_model=CompanyList,
    responses=problem_responses(401, 403, 404, 422, 429),
    summary="The businesses behind the visits",
)
async def list_companies(
    caller: ReadCaller,
    session: ReadSession,
    site_id: Annotated[str | None, Query(max_length=40, pattern=SITE_ID_PATTERN)] = None,
    since: Annotated[Timestamp | None, Query(description="Only visits at or after this time.")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> CompanyList:
    """One row per business identified among the account's visits, the most recently seen first."""
    found = await service.companies(session, account_id=caller.account_id, site_id=site_id, since=since, limit=limit)
    return CompanyList(companies=found)
