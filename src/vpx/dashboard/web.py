"""What every dashboard page shares: templates, security headers, and the error handlers that turn
refusals and service errors into HTML pages instead of problem+json."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates

from vpx.errors import ProblemError, validation_errors
from vpx.money import credits_header

TEMPLATES = Jinja2Templates(directory=Path(__file__).resolve().parent / "templates")

# Scripts and styles from our own origin only; no inline script, no framing, forms post only here.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    # Pages show balances, contacts and (once) secrets: never cached.
    "Cache-Control": "no-store",
}


def _credits(value: Decimal | int | None) -> str:
    return "" if value is None else credits_header(Decimal(value))


def _when(value: datetime | None) -> str:
    return "" if value is None else value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _day(value: datetime | None) -> str:
    return "" if value is None else value.astimezone(UTC).strftime("%Y-%m-%d")


def _credit_count(value: Decimal | int | None) -> str:
    """An amount with its unit: "1 credit", "0.5 credits", "3 credits"."""
    if value is None:
        return ""
    return f"{_credits(value)} {'credit' if Decimal(value) == 1 else 'credits'}"


# Signal categories as people read them; the API's codes stay in form values and URLs.
CATEGORY_LABELS = {
    "switching_intent": "Switching intent",
    "bant_qualified": "BANT-qualified",
    "funding_ma": "Funding and M&A",
    "topic_surge": "Topic surge",
    "permit_filed": "Permit filed",
    "tech_install": "Technology installed",
}


def _category(code: str | None) -> str:
    return "" if code is None else CATEGORY_LABELS.get(code, code.replace("_", " "))


# Email deliverability as people read it (the API's statuses, docs/api-guide.md "Email deliverability").
EMAIL_STATUS_LABELS = {
    "mx_found": "deliverable",
    "no_mx": "no mail server",
    "bounced": "bounced",
    "invalid_syntax": "not a valid address",
    "valid_syntax": "not checked yet",
    "unknown": "not checked yet",
}
# Why a contact you revealed is on the suppression list, as people read it.
SUPPRESSION_LABELS = {
    "opt_out": "opted out",
    "do_not_contact": "asked not to be contacted",
    "fcra": "regulated (FCRA) record",
    "unsubscribed": "unsubscribed",
}


def _email_status(code: str | None) -> str:
    return "" if code is None else EMAIL_STATUS_LABELS.get(code, code.replace("_", " "))


def _suppression(code: str | None) -> str:
    return "" if code is None else SUPPRESSION_LABELS.get(code, code.replace("_", " "))


TEMPLATES.env.filters.update(
    credits=_credits,
    credit_count=_credit_count,
    when=_when,
    day=_day,
    category=_category,
    email_status=_email_status,
    suppression=_suppression,
)
TEMPLATES.env.globals["category_labels"] = CATEGORY_LABELS


class SignInRequired(Exception):
    """The page needs a signed-in account; the browser is sent to the sign-in page."""


class CsrfRefused(Exception):
    """A form without this session's token (or sent from another site)."""


class PageRefused(Exception):
    """A request the dashboard answers with an error page."""

    def __init__(self, status: int, title: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail = status, title, detail


def render(
    request: Request,
    template: str,
    context: dict[str, Any] | None = None,
    *,
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> HTMLResponse:
    values = {"title": "", "section": "", "user": None, "balance": None, "csrf_token": ""}
    values.update(getattr(request.state, "page_context", {}))
    values.update(context or {})
    return TEMPLATES.TemplateResponse(request, template, values, status_code=status, headers=headers)


def error_page(request: Request, status: int, title: str, detail: str) -> HTMLResponse:
    return render(request, "error.html", {"title": title, "detail": detail, "status": status}, status=status)


def safe_next(value: str | None) -> str:
    """Where to go after signing in: a dashboard path of this site, never another site."""
    if value and value.startswith("/dashboard") and "//" not in value and "\\" not in value:
        return value
    return "/dashboard"


class DashboardRoute(APIRoute):
    """Dashboard routes: every response carries the security headers.

    Errors are not caught here: they must leave the route so that the request's database session
    rolls back first (it is closed around the route handler). ``install_page_errors`` renders them.
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        original = super().get_route_handler()

        async def handler(request: Request) -> Response:
            return with_security_headers(await original(request))

        return handler


def with_security_headers(response: Response) -> Response:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


async def _answer(handler: Callable[[Request, Exception], Any], request: Request, exc: Exception) -> Response:
    """The API's own answer (its handlers may be plain or async functions)."""
    result = handler(request, exc)
    response: Response = await result if inspect.isawaitable(result) else result
    return response


def _is_dashboard(request: Request) -> bool:
    return request.url.path == "/dashboard" or request.url.path.startswith("/dashboard/")


def install_page_errors(app: FastAPI) -> None:
    """Answers the dashboard's errors as HTML pages (and the API's, as before, as problem+json)."""
    problem_handler = app.exception_handlers[ProblemError]
    validation_handler = app.exception_handlers[RequestValidationError]

    async def on_sign_in_required(request: Request, exc: Exception) -> Response:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        redirect = RedirectResponse(f"/dashboard/login?next={quote(safe_next(target))}", status_code=303)
        return with_security_headers(redirect)

    async def on_csrf_refused(request: Request, exc: Exception) -> Response:
        detail = (
            "This form was not sent from this dashboard page, or it has expired. "
            "Go back, reload the page and try again."
        )
        return with_security_headers(error_page(request, 403, "Form refused", detail))

    async def on_page_refused(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, PageRefused)
        return with_security_headers(error_page(request, exc.status, exc.title, exc.detail))

    async def on_problem(request: Request, exc: Exception) -> Response:
        if not _is_dashboard(request):
            return await _answer(problem_handler, request, exc)
        assert isinstance(exc, ProblemError)
        response = error_page(request, exc.status, exc.title, exc.detail)
        if "Retry-After" in exc.headers:
            response.headers["Retry-After"] = exc.headers["Retry-After"]
        return with_security_headers(response)

    async def on_invalid(request: Request, exc: Exception) -> Response:
        if not _is_dashboard(request):
            return await _answer(validation_handler, request, exc)
        assert isinstance(exc, RequestValidationError)
        detail = "; ".join(f"{e.field}: {e.message}" for e in validation_errors(exc.errors())[:5])
        return with_security_headers(error_page(request, 422, "Invalid request", detail or "Invalid request."))

    app.add_exception_handler(SignInRequired, on_sign_in_required)
    app.add_exception_handler(CsrfRefused, on_csrf_refused)
    app.add_exception_handler(PageRefused, on_page_refused)
    app.add_exception_handler(ProblemError, on_problem)
    app.add_exception_handler(RequestValidationError, on_invalid)
