"""The page dependency: a signed-in account, with what the layout shows (balance, CSRF token)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from pydantic import ValidationError

from vpx.credits import service as credit_service
from vpx.dashboard import sessions
from vpx.dashboard.sessions import SignedIn, require_user
from vpx.dashboard.web import DashboardRoute, render
from vpx.validation_messages import error_message


def dashboard_router() -> APIRouter:
    """A router for dashboard pages: HTML errors, and outside the OpenAPI document."""
    return APIRouter(prefix="/dashboard", route_class=DashboardRoute, include_in_schema=False)


async def page_user(request: Request, user: Annotated[SignedIn, Depends(require_user)]) -> SignedIn:
    state = request.app.state
    async with state.database.read_sessions() as session:
        balance = await credit_service.effective_balance(
            session, account_id=user.account_id, now=state.clock.now(), settings=state.settings
        )
    request.state.page_context = {"user": user, "csrf_token": user.csrf_token, "balance": balance.total}
    return user


Page = Annotated[SignedIn, Depends(page_user)]


def field_errors(exc: ValidationError) -> dict[str, str]:
    """The first message for each form field, in words a person reads."""
    errors: dict[str, str] = {}
    for item in exc.errors():
        field = str(item["loc"][0]) if item["loc"] else "form"
        message = error_message(item)
        errors.setdefault(field, message)
    return errors


def form_values(form: Any, *names: str) -> dict[str, str]:
    return {name: str(form.get(name) or "") for name in names}


def anonymous_page(request: Request, template: str, context: Mapping[str, object], status: int = 200) -> Response:
    """A page with a form for a signed-out browser: its double-submit CSRF token, and the cookie
    that goes with it when the browser has none yet."""
    token = sessions.anonymous_csrf_token(request)
    response = render(request, template, {**context, "csrf_token": token}, status=status)
    sessions.remember_anonymous_token(request, response)
    return response
