"""The operator page: GET /operator (sources' freshness and the data-quality figures), its sign-in
with an admin token and its sign-out. Read-only; outside the OpenAPI document.

With no admin token configured every route answers 404 with a page saying operator access is off.
Tokens are checked by the admin API's own check (vpx.admin.auth.check_admin_token), so a wrong token
counts against the same failed-token budget as a wrong `X-Admin-Token`: the client address's, or, for
a browser that signed in here before, the budget of its token's known browsers (vpx.operator_page.sessions).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates

from vpx.admin.auth import check_admin_token, client_budget
from vpx.compliance.overview import overview as compliance_overview
from vpx.dashboard.web import DashboardRoute
from vpx.db import WriteSession
from vpx.errors import ProblemError
from vpx.operator_page import sessions
from vpx.operator_page.sessions import FormRefused, Operator
from vpx.quality.figures import quality_figures
from vpx.sources import service as source_service

TEMPLATES = Jinja2Templates(directory=Path(__file__).resolve().parent / "templates")

# DashboardRoute: the dashboard's security headers (CSP without inline script, no framing, no-store).
router = APIRouter(prefix="/operator", route_class=DashboardRoute, include_in_schema=False)


def _when(value: datetime | None) -> str:
    if value is None:
        return ""
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _age(seconds: float | None) -> str:
    """``3d 4h``, ``2h 5m``, ``40s``: the two largest units."""
    if seconds is None:
        return ""
    left = max(int(seconds), 0)
    parts: list[str] = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if left >= size or (unit == "s" and not parts):
            parts.append(f"{left // size}{unit}")
            left %= size
    return " ".join(parts[:2])


def _percent(share: float) -> str:
    return f"{share * 100:.1f}%"


TEMPLATES.env.filters.update(when=_when, age=_age, percent=_percent)


def _render(request: Request, template: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
    values: dict[str, Any] = {"operator": None, "csrf_token": "", "title": ""}
    values.update(context)
    return TEMPLATES.TemplateResponse(request, template, values, status_code=status)


def _access_off(request: Request) -> bool:
    return not request.app.state.settings.named_admin_tokens()


def _off_page(request: Request) -> HTMLResponse:
    return _render(request, "operator_off.html", {"title": "Operator access is off"}, status=404)


def _refused_page(request: Request) -> HTMLResponse:
    detail = "This form was not sent from this page, or it has expired. Go back, reload the page and try again."
    return _render(request, "operator_refused.html", {"title": "Form refused", "detail": detail}, status=403)


def _to_sign_in() -> RedirectResponse:
    return RedirectResponse("/operator/sign-in", status_code=303)


def _sign_in_page(request: Request, *, error: str = "", status: int = 200, signed_in_as: str = "") -> HTMLResponse:
    token = sessions.anonymous_csrf_token(request)
    context = {"title": "Operator sign-in", "csrf_token": token, "error": error, "signed_in_as": signed_in_as}
    response = _render(request, "operator_signin.html", context, status)
    sessions.remember_anonymous_token(request, response)
    return response


@router.get("")
async def operator_page(request: Request) -> Response:
    if _access_off(request):
        return _off_page(request)
    operator = await sessions.current_operator(request)
    if operator is None:
        return _to_sign_in()
    state = request.app.state
    now: datetime = state.clock.now()
    async with state.database.read_sessions() as session:
        found = await source_service.list_sources(session)
        quality = await quality_figures(session, now=now)
        compliance = await compliance_overview(session, state.settings, now=now)
    sources = [source_service.freshness(source, now) for source in found]
    return _render(
        request,
        "operator.html",
        {
            "title": "Operator",
            "operator": operator,
            "csrf_token": operator.csrf_token,
            "now": now,
            "sources": sources,
            "quality": quality,
            "compliance": compliance,
        },
    )


@router.get("/sign-in")
async def sign_in_form(request: Request) -> Response:
    if _access_off(request):
        return _off_page(request)
    # The form even to a browser holding a session: whoever sits at it signs in with their own token,
    # and the session the browser held (perhaps one planted in it) ends.
    operator = await sessions.current_operator(request)
    return _sign_in_page(request, signed_in_as=operator.name if operator else "")


@router.post("/sign-in")
async def sign_in(request: Request, session: WriteSession) -> Response:
    if _access_off(request):
        return _off_page(request)
    try:
        form = await sessions.checked_form(request, request.cookies.get(sessions.CSRF_COOKIE, ""))
    except FormRefused:
        return _refused_page(request)
    sent = form.get("token")
    token = sent.strip() if isinstance(sent, str) else ""
    # A browser that signed in here before spends the budget of its token's known browsers, so wrong
    # tokens sent from its address by someone else cannot lock it out. Not D7's rule for keys (the
    # right one always served): an operator's token is chosen, not 190 random bits, and serving it
    # past the budget would answer every guess.
    known = sessions.known_browser_budget(request)
    try:
        # The admin API's own check: the same comparison, the same failed-token budget.
        name = await check_admin_token(request, token, budget=known or client_budget(request))
    except ProblemError as exc:
        if exc.status == 429:
            detail = (
                "Too many wrong admin tokens from this browser, or another one that signed in with the same "
                "token; try again later."
                if known
                else exc.detail
            )
            refused = _sign_in_page(request, error=detail, status=429)
            if "Retry-After" in exc.headers:
                refused.headers["Retry-After"] = exc.headers["Retry-After"]
            return refused
        return _sign_in_page(request, error="That is not an admin token of this server.", status=403)
    state = request.app.state
    now: datetime = state.clock.now()
    # Always a new session, never the one the browser sent (which ends): no cookie planted before
    # sign-in becomes the signed-in session.
    cookie = await sessions.start_session(
        session, name=name, token=token, box=state.secrets, now=now, replacing=sessions.presented_session_id(request)
    )
    response = RedirectResponse("/operator", status_code=303)
    sessions.set_session_cookie(response, cookie, state.settings)
    sessions.mark_known_browser(response, token=token, box=state.secrets, now=now, settings=state.settings)
    return response


@router.post("/sign-out")
async def sign_out(request: Request, session: WriteSession) -> Response:
    if _access_off(request):
        return _off_page(request)
    operator: Operator | None = await sessions.current_operator(request)
    if operator is None:
        return _to_sign_in()
    try:
        await sessions.checked_form(request, operator.csrf_token)
    except FormRefused:
        return _refused_page(request)
    # The row goes: every copy of the cookie opens nothing from now on, in every process.
    await sessions.end_session(session, session_id=operator.session_id)
    response = _to_sign_in()
    sessions.clear_session_cookie(response, request.app.state.settings)
    return response
