"""The public collection endpoints (D33): no API key, keyed by the site's public key, open to every
origin, rate-limited per site and per visitor address.

- ``GET /v/{site_key}.js``: the snippet's script (small, cacheable): it reports each page view, SPA
  navigations included, with ``navigator.sendBeacon``;
- ``POST /v/collect``: one page view (sendBeacon posts JSON as text/plain: the body is read whatever
  its content type); 204 at once, the visit resolved and recorded right after the answer;
- ``GET /v/{site_key}/pixel.gif?url=…``: a 1×1 GIF that records a view (email, pages without
  JavaScript); an unknown key, or a page that is not a URL, still gets its GIF and records nothing.

``Sec-GPC: 1`` or ``DNT: 1`` records the view as ``opted_out``, nothing resolved. The visitor's address
is the connection's, or ``X-Forwarded-For`` from ``VPX_TRUSTED_PROXIES`` only; it is never stored or
logged (vpx.visitors.addresses). Its budget is spent before a body is read, so a body that is not a page
view (a 400, a 413, a 422, a 404) costs as much as one that is; such a body never logs a traceback.
"""

from __future__ import annotations

import base64
import json
import logging
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, BackgroundTasks, Path, Query, Request, Response
from limits import parse as parse_rate_limit
from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError

from vpx.auth.network import client_address
from vpx.auth.ratelimit import RateLimits
from vpx.config import Settings
from vpx.db import Database
from vpx.errors import (
    InvalidParameters,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    is_data_exception,
    parse_client_json,
    problem_responses,
    validation_errors,
)
from vpx.fields import SingleLine
from vpx.models import VisitorSite
from vpx.visitors import service
from vpx.visitors.addresses import address_key, clean_url, parse_visitor
from vpx.visitors.resolution import VisitorResolver
from vpx.visitors.schemas import MAX_URL, PageView

log = logging.getLogger("vpx.visitors")
router = APIRouter(prefix="/v", tags=["visitors (public)"])
SiteKey = Annotated[str, Path(max_length=40, examples=["vpxs_3kTz9aQ1xYb2LmN0pQrStUvW"])]
MAX_BEACON_BYTES = 16_384
OPEN = {"Access-Control-Allow-Origin": "*", "Cross-Origin-Resource-Policy": "cross-origin"}
GIF = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
SCRIPT = """(function () {
  var endpoint = %(endpoint)s, key = %(key)s, last = null;
  function send() {
    var url = location.href;
    if (url === last) return;
    last = url;
    var body = JSON.stringify({site_key: key, url: url, referrer: document.referrer || null,
                               title: document.title || null});
    if (navigator.sendBeacon && navigator.sendBeacon(endpoint, body)) return;
    try { fetch(endpoint, {method: "POST", body: body, keepalive: true, mode: "no-cors", credentials: "omit"}); }
    catch (e) {}
  }
  send();
  var push = history.pushState;
  if (push) {
    history.pushState = function () { var r = push.apply(this, arguments); setTimeout(send, 0); return r; };
  }
  addEventListener("popstate", function () { setTimeout(send, 0); });
})();
"""


@router.get(
    "/{site_key}.js",
    response_class=Response,
    responses={200: {"content": {"text/javascript": {}}, "description": "The snippet's script."}, 404: {}},
    summary="The snippet's script",
)
async def script(site_key: SiteKey, request: Request) -> Response:
    """The script the snippet loads: it reports each page view of the site (no cookies, no storage)."""
    site = await _site(request, site_key)
    if site is None:
        raise NotFound("No site has this key.")
    settings: Settings = request.app.state.settings
    body = SCRIPT % {
        "endpoint": json.dumps(settings.public_url.rstrip("/") + "/v/collect"),
        "key": json.dumps(site.site_key),
    }
    headers = {**OPEN, "Cache-Control": "public, max-age=300"}
    return Response(body, media_type="text/javascript", headers=headers)


@router.options("/collect", include_in_schema=False)
async def collect_preflight() -> Response:
    headers = {
        **OPEN,
        "Access-Control-Allow-Methods": "POST",
        "Access-Control-Allow-Headers": "Content-Type",
        "Access-Control-Max-Age": "86400",
    }
    return Response(status_code=204, headers=headers)


@router.post(
    "/collect",
    status_code=204,
    response_class=Response,
    responses=problem_responses(400, 404, 413, 422, 429),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "text/plain": {"schema": PageView.model_json_schema()},
                "application/json": {"schema": PageView.model_json_schema()},
            },
        }
    },
    summary="Report a page view (the snippet)",
)
async def collect(request: Request, background: BackgroundTasks) -> Response:
    """One page view: `{"site_key", "url", "referrer"?, "title"?}` as JSON, whatever the content type
    (sendBeacon sends text/plain). Answers 204 at once; the visit is resolved and recorded next."""
    # The address's budget is spent before the body is read: a body that is not a page view costs
    # the sender as much as one that is.
    address = await _spend_address_budget(request)
    raw = await _page_view_body(request)
    payload = parse_client_json(raw)
    if not isinstance(payload, dict):
        raise InvalidParameters.field("body", "must be a JSON object with site_key and url")
    try:
        view = PageView.model_validate(payload)
    except ValidationError as exc:
        errors = validation_errors(exc.errors())
        raise InvalidParameters("; ".join(f"{e.field}: {e.message}" for e in errors[:5]), errors=errors) from None
    site = await _site(request, view.site_key)
    if site is None:
        raise NotFound("No site has this key.")
    url = clean_url(view.url)
    if url is None:
        raise InvalidParameters.field("url", "must be a URL")
    await _spend_site_budget(request, site)
    referrer = clean_url(view.referrer) if view.referrer else None
    background.add_task(_record, request, site, address, url, referrer, view.title, "snippet")
    return Response(status_code=204, headers=OPEN)


@router.get(
    "/{site_key}/pixel.gif",
    response_class=Response,
    responses={200: {"content": {"image/gif": {}}, "description": "A 1×1 transparent GIF."}, 422: {}, 429: {}},
    summary="Record a page view (the pixel)",
)
async def pixel(
    site_key: SiteKey,
    request: Request,
    background: BackgroundTasks,
    url: Annotated[
        SingleLine | None, Query(max_length=MAX_URL, description="The page viewed (default: the Referer).")
    ] = None,
) -> Response:
    """A 1×1 GIF; a known key also records the view (the page from `url`, else the Referer; a page
    that is not a URL records nothing)."""
    headers = {**OPEN, "Cache-Control": "no-store"}
    site = await _site(request, site_key)
    page = url or request.headers.get("referer")
    cleaned = clean_url(page) if page and len(page) <= MAX_URL else None
    if site is not None and cleaned is not None:
        address = await _spend_address_budget(request)
        await _spend_site_budget(request, site)
        background.add_task(_record, request, site, address, cleaned, None, None, "pixel")
    return Response(GIF, media_type="image/gif", headers=headers)


async def _page_view_body(request: Request) -> bytes:
    """The body, read no further than a page view may go (a 413 past it)."""
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BEACON_BYTES:
            raise PayloadTooLarge(f"A page view is at most {MAX_BEACON_BYTES} bytes.")
    return bytes(raw)


async def _site(request: Request, site_key: str) -> VisitorSite | None:
    database: Database = request.app.state.database
    async with database.read_sessions() as session:
        return await service.site_by_key(session, site_key)


async def _spend_address_budget(request: Request) -> str | None:
    """The visitor's address, once its budget allows one more view (else a 429)."""
    settings: Settings = request.app.state.settings
    peer = request.client.host if request.client else None
    address = client_address(peer, request.headers.get("x-forwarded-for"), request.app.state.trusted_proxies)
    if address:
        await _spend(request, settings.visitor_address_rate_limit, "visitor_address", address_key(address))
    return address


async def _spend_site_budget(request: Request, site: VisitorSite) -> None:
    settings: Settings = request.app.state.settings
    await _spend(request, settings.visitor_site_rate_limit, "visitor_site", site.id)


async def _spend(request: Request, limit: str, namespace: str, identifier: str) -> None:
    limits: RateLimits = request.app.state.rate_limits
    verdict = await limits.spend(parse_rate_limit(limit), namespace, identifier, policy=namespace)
    if not verdict.allowed:
        raise RateLimited("Too many page views; try again later.", headers=verdict.headers)


async def _record(
    request: Request,
    site: VisitorSite,
    address: str | None,
    url: str,
    referrer: str | None,
    title: str | None,
    channel: str,
) -> None:
    """Resolves and records one view (its URLs already cleaned), after the answer went out. A failure
    is logged (without the address) and the view is lost: the page it came from has moved on."""
    headers = request.headers
    opted_out = headers.get("sec-gpc", "").strip() == "1" or headers.get("dnt", "").strip() == "1"
    database: Database = request.app.state.database
    resolver: VisitorResolver = request.app.state.visitors
    now: datetime = request.app.state.clock.now()
    try:
        async with database.write_sessions() as session, session.begin():
            resolution = await resolver.resolve(
                session,
                None if opted_out else parse_visitor(address),
                user_agent=headers.get("user-agent"),
                opted_out=opted_out,
            )
            await service.record_visit(
                session,
                site=site,
                resolution=resolution,
                url=url,
                referrer=referrer,
                title=title,
                channel=channel,
                occurred_at=now,
                now=now,
            )
    except Exception as exc:
        if isinstance(exc, DBAPIError) and is_data_exception(exc):
            # The view's own values (a client's input) were refused: worth a line, not a traceback.
            log.warning("a page view's values were refused by the database", extra={"site_id": site.id})
        else:
            log.exception("a page view could not be recorded", extra={"site_id": site.id})
