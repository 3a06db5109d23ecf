"""Pages for capabilities other work delivers (the signals page and its live view): each part comes
alive when its route exists in this app, and says so plainly until then."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from fastapi import Request, Response
from sqlalchemy import select

from vpx.dashboard.pages import Page, dashboard_router
from vpx.dashboard.web import SignInRequired, render
from vpx.db import ReadSession
from vpx.deps import AppSettings
from vpx.models import DashboardSession
from vpx.signals import service as signal_service
from vpx.signals.access import SessionAccess
from vpx.signals.sse import stream_response

router = dashboard_router()

SIGNAL_STREAM = "/api/v1/signals/stream"
# The live view's own stream: the signed-in browser cannot send an X-API-Key header from
# EventSource, so the signals work adds this session-authenticated relay of the D23 stream.
DASHBOARD_SIGNAL_STREAM = "/dashboard/signals/stream"


def route_paths(routes: Iterable[Any], prefix: str = "") -> Iterator[str]:
    """Every path the app serves, including those of included routers."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            context = getattr(route, "include_context", None)
            yield from route_paths(inner.routes, prefix + str(getattr(context, "prefix", "") or ""))
        elif (path := getattr(route, "path", None)) is not None:
            yield prefix + path


def has_route(request: Request, path: str) -> bool:
    return path in route_paths(request.app.routes)


LATEST_SIGNALS = 25


@router.get("/signals")
async def signals_page(request: Request, user: Page, session: ReadSession, settings: AppSettings) -> Response:
    live = has_route(request, DASHBOARD_SIGNAL_STREAM)
    # The latest signals (D22's first page, newest first), as the account's keys would see them: an
    # fcra_blocked one reduced to its public fields (D19).
    latest = await signal_service.query_signals(
        session, signal_filter=signal_service.SignalFilter(), limit=LATEST_SIGNALS, cursor=None, settings=settings
    )
    return render(
        request,
        "signals.html",
        {
            "title": "Signals",
            "section": "signals",
            "stream_url": DASHBOARD_SIGNAL_STREAM if live else None,
            "api_available": has_route(request, SIGNAL_STREAM),
            "latest": latest.signals,
            # The live list continues from the table's newest signal.
            "stream_after": max((s.sequence for s in latest.signals), default=None),
        },
    )


def _sequence(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else None


@router.get("/signals/stream")
async def signals_stream(request: Request, user: Page, settings: AppSettings) -> Response:
    """The live view's feed: the D23 stream of available signals for a signed-in browser (EventSource
    sends the session cookie, not an API key), with Last-Event-ID resume like the API's. It ends with
    `event: closed` when the session does (sign-out, expiry) or the account is suspended or deleted."""
    # Where to continue from: the browser's Last-Event-ID when it reconnects; on the first connection,
    # the last signal of the page's table (`after`), so the list neither repeats the table nor misses
    # what arrived between the page and its stream.
    last_event_id = _sequence(request.headers.get("last-event-id", ""))
    if last_event_id is None:
        last_event_id = _sequence(request.query_params.get("after", ""))
    state = request.app.state
    async with state.database.read_sessions() as session:
        expires_at = await session.scalar(
            select(DashboardSession.expires_at).where(DashboardSession.id == user.session_id)
        )
    if expires_at is None:  # signed out since this request was let in
        raise SignInRequired()
    return stream_response(
        broker=state.signal_broker,
        database=state.database,
        settings=settings,
        signal_filter=signal_service.SignalFilter(),
        last_event_id=last_event_id,
        # Re-checked while the stream is open: the session (sign-out, expiry) and the account.
        access=SessionAccess(
            session_id=user.session_id,
            account_id=user.account_id,
            expires_in=(expires_at - state.clock.now()).total_seconds(),
        ),
    )
