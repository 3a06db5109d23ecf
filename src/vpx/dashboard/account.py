"""Sign in, sign out, and the overview page (sign-up: vpx.dashboard.signup)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated

from fastapi import Query, Request, Response
from fastapi.responses import RedirectResponse
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.accounts import service as account_service
from vpx.auth import service as key_service
from vpx.clock import next_month_start
from vpx.config import Settings
from vpx.credits import service as credit_service
from vpx.dashboard import confirmations, logins, mailing, sessions, signup
from vpx.dashboard.pages import Page, anonymous_page, dashboard_router, field_errors, form_values
from vpx.dashboard.sessions import AnonymousForm, UserForm
from vpx.dashboard.throttle import client_address, spend_attempt
from vpx.dashboard.web import render, safe_next
from vpx.db import ReadSession, WriteSession
from vpx.deps import AppSettings, Now
from vpx.errors import ACCOUNT_SUSPENDED as SUSPENDED
from vpx.mail.outbox import outbox_of

router = dashboard_router()


@router.get("/login")
async def login_page(
    request: Request,
    next: Annotated[str | None, Query(max_length=500)] = None,
    reset: Annotated[int, Query(ge=0, le=1)] = 0,
) -> Response:
    """``reset=1``: back from a password reset (vpx.dashboard.reset), which says so above the form."""
    context = {"title": "Sign in", "values": {}, "errors": {}, "next": safe_next(next), "password_reset": bool(reset)}
    return anonymous_page(request, "signin.html", context)


@router.post("/login")
async def login(
    request: Request,
    form: AnonymousForm,
    reader: ReadSession,
    session: WriteSession,
    settings: AppSettings,
    now: Now,
) -> Response:
    """Attempts are limited per client address and per email address."""
    values = form_values(form, "email")
    target = safe_next(str(form.get("next") or ""))
    context = {"title": "Sign in", "values": values, "next": target}
    try:
        data = logins.SignInForm(**form_values(form, "email", "password"))
    except ValidationError as exc:
        return anonymous_page(request, "signin.html", {**context, "errors": field_errors(exc)}, status=422)
    address = client_address(request)
    await spend_attempt(request, settings.login_rate_limit, ("login-ip", address), ("login-email", data.email))
    # The password is checked in a read transaction: argon2 takes a moment, and no write lock is held.
    checked = await logins.check_password(reader, email=data.email, password=data.password)
    if checked.account_id is None:
        errors = {"form": "The email or the password is not right."}
        return anonymous_page(request, "signin.html", {**context, "errors": errors}, status=401)
    if checked.status != "active":
        # The operator suspended the account: the same words as the API's account_suspended problem.
        errors = {"form": SUSPENDED}
        return anonymous_page(request, "signin.html", {**context, "errors": errors}, status=403)
    if not checked.confirmed:
        return await _confirm_first(
            request, session, settings, now, account_id=checked.account_id, email=data.email, context=context
        )
    new_hash = await logins.hash_password(data.password) if checked.rehash else None
    await logins.record_sign_in(session, account_id=checked.account_id, now=now, new_hash=new_hash)
    token = await sessions.start_session(session, account_id=checked.account_id, now=now, settings=settings)
    response = RedirectResponse(target, status_code=303)
    sessions.set_session_cookie(response, token, settings)
    return response


async def _confirm_first(
    request: Request,
    session: AsyncSession,
    settings: Settings,
    now: datetime,
    *,
    account_id: str,
    email: str,
    context: Mapping[str, object],
) -> Response:
    """The right password for an address not confirmed yet: no session, and a new confirmation link
    (the earlier one stops working), since the first may have expired or been lost."""
    letter = None
    if mailing.can_send(settings):
        token = confirmations.new_token()
        await confirmations.issue(session, account_id=account_id, token=token, now=now)
        letter = signup.confirmation_letter(email=email, account_id=account_id, settings=settings, token=token)
        message = (
            f"Confirm your email address first: we have sent a new link to {email}. Follow it to finish signing up."
        )
    else:
        message = "Confirm your email address first. This server cannot send email now: ask its operator."
    response = anonymous_page(request, "signin.html", {**context, "errors": {"form": message}}, status=403)
    if letter is not None:
        response.background = outbox_of(request.app).after_response(letter)
    return response


@router.post("/logout")
async def logout(request: Request, form: UserForm, session: WriteSession, settings: AppSettings) -> Response:
    user = await sessions.require_user(request)
    await sessions.end_session(session, session_id=user.session_id)
    response = RedirectResponse("/dashboard/login", status_code=303)
    sessions.clear_session_cookie(response, settings)
    return response


@router.get("")
async def overview(
    request: Request,
    user: Page,
    session: ReadSession,
    settings: AppSettings,
    now: Now,
    welcome: Annotated[int, Query(ge=0, le=1)] = 0,
) -> Response:
    account = await account_service.get_account(session, account_id=user.account_id)
    balance = await credit_service.effective_balance(session, account_id=user.account_id, now=now, settings=settings)
    keys = await key_service.list_keys(session, account_id=user.account_id, include_revoked=False)
    return render(
        request,
        "overview.html",
        {
            "title": "Overview",
            "section": "overview",
            "account": account,
            "balance_detail": balance,
            "allowance": credit_service.monthly_allowance(account.plan, settings),
            "next_reset": next_month_start(now),
            "active_keys": len(keys),
            "due_keys": sum(1 for k in keys if key_service.rotation_due(k, now)),
            "max_active_keys": settings.max_active_keys,
            "welcome": bool(welcome),
        },
    )
