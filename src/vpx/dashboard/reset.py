"""Password reset by email: "Forgot password?" on the sign-in page asks for an email address and,
when it belongs to an active account with a dashboard password, sends a single-use link that works
for VPX_PASSWORD_RESET_MINUTES (vpx.dashboard.reset_tokens). The answer is the same page, with the
same status, whoever the address belongs to; the email goes after the answer (vpx.mail.outbox).
Without a way to send email there is no reset (vpx.dashboard.mailing): the link would otherwise be
written to the log.

Following the link asks for a new password (the sign-up rules); setting it ends every dashboard
session of the account, confirms its email address if that was not done yet, and leads to the
sign-in page, which says the password has changed.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import Query, Request, Response
from fastapi.responses import RedirectResponse
from pydantic import BaseModel, Field, ValidationError, field_validator

from vpx.config import Settings
from vpx.dashboard import logins, mailing, reset_tokens, sessions
from vpx.dashboard.pages import anonymous_page, dashboard_router, field_errors, form_values
from vpx.dashboard.sessions import AnonymousForm
from vpx.dashboard.throttle import client_address, spend_attempt
from vpx.dashboard.web import render
from vpx.db import ReadSession, WriteSession, request_transaction
from vpx.deps import AppSettings, Now
from vpx.mail.outbox import Letter, outbox_of

router = dashboard_router()

SUBJECT = "Reset your vpx dashboard password"


class ForgotForm(BaseModel):
    email: str = Field(max_length=320)

    @field_validator("email", mode="before")
    @classmethod
    def _normalise(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("email")
    @classmethod
    def _email(cls, value: str) -> str:
        if not logins.EMAIL.match(value):
            raise ValueError("enter the email address you signed up with, such as you@example.com")
        return value


class NewPasswordForm(BaseModel):
    """The sign-up rules: taken exactly as typed, 10 to 256 characters."""

    password: str = Field(min_length=logins.MIN_PASSWORD, max_length=logins.MAX_PASSWORD)


def reset_link(settings: Settings, token: str) -> str:
    # The token travels in the query string: the access log records paths without it.
    return f"{settings.public_url.rstrip('/')}/dashboard/reset?{urlencode({'token': token})}"


def reset_letter(*, email: str, account_id: str, link: str, token: str, minutes: int) -> Letter:
    text = (
        f"Someone asked to reset the password of the vpx dashboard account {email}.\n"
        "If it was you, choose a new password here:\n"
        "\n"
        f"{link}\n"
        "\n"
        f"The link works once, for {minutes} minutes. Setting a new password signs\n"
        "the account out of every browser.\n"
        "\n"
        "If you did not ask, ignore this email: your password stays as it is.\n"
    )
    return Letter(
        to=email, subject=SUBJECT, text=text, purpose="password reset", account_id=account_id, secrets=(token,)
    )


@router.get("/forgot")
async def forgot_page(request: Request, settings: AppSettings) -> Response:
    if not mailing.can_send(settings):
        return mailing.unavailable_page(request, "reset", status=200)
    return anonymous_page(request, "forgot.html", {"title": "Reset your password", "values": {}, "errors": {}})


@router.post("/forgot")
async def forgot(
    request: Request, form: AnonymousForm, session: WriteSession, settings: AppSettings, now: Now
) -> Response:
    """The same answer whether or not the address has an account; requests are limited per client
    address and per email address, like sign-in attempts."""
    if not mailing.can_send(settings):
        return mailing.unavailable_page(request, "reset", status=403)
    values = form_values(form, "email")
    try:
        data = ForgotForm(**values)
    except ValidationError as exc:
        context = {"title": "Reset your password", "values": values, "errors": field_errors(exc)}
        return anonymous_page(request, "forgot.html", context, status=422)
    address = client_address(request)
    await spend_attempt(request, settings.password_reset_rate_limit, ("reset-ip", address), ("reset-email", data.email))
    # The same work whoever asks, as far as it goes: a look-up, a token, a write (the expired tokens
    # go); only the row of the new token and the email after the answer are the account's alone.
    target = await reset_tokens.account_for_reset(session, email=data.email)
    token = reset_tokens.new_token()
    letter = reset_letter(
        email=target.email if target else data.email,
        account_id=target.account_id if target else "",
        link=reset_link(settings, token),
        token=token,
        minutes=settings.password_reset_minutes,
    )
    await reset_tokens.issue(session, target=target, token=token, now=now, settings=settings)
    sent = {"title": "Check your email", "email": data.email, "minutes": str(settings.password_reset_minutes)}
    response = render(request, "forgot_sent.html", sent)
    if target is not None:
        response.background = outbox_of(request.app).after_response(letter)
    return response


def _link_refused(request: Request, settings: Settings) -> Response:
    context = {"title": "This link does not work", "minutes": settings.password_reset_minutes}
    return render(request, "reset_refused.html", context, status=410)


def _form_page(request: Request, token: str, email: str, errors: dict[str, str], status: int = 200) -> Response:
    context = {"title": "Choose a new password", "token": token, "email": email, "errors": errors}
    response = anonymous_page(request, "reset.html", context, status=status)
    # The page's address holds the token: sent nowhere else, not even to this site's own files.
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@router.get("/reset")
async def reset_page(
    request: Request,
    session: ReadSession,
    settings: AppSettings,
    now: Now,
    token: Annotated[str, Query(max_length=500)] = "",
) -> Response:
    """Shows the form only; a link opened by a mail scanner spends nothing."""
    target = await reset_tokens.find(session, token=token, now=now)
    if target is None:
        return _link_refused(request, settings)
    return _form_page(request, token, target.email, {})


@router.post("/reset")
async def reset(
    request: Request, form: AnonymousForm, reader: ReadSession, settings: AppSettings, now: Now
) -> Response:
    token = str(form.get("token") or "")
    target = await reset_tokens.find(reader, token=token, now=now)
    if target is None:
        return _link_refused(request, settings)
    try:
        data = NewPasswordForm(**form_values(form, "password"))
    except ValidationError as exc:
        return _form_page(request, token, target.email, field_errors(exc), status=422)
    # argon2 takes a moment: hashed before the write transaction, which holds SQLite's write lock.
    password_hash = await logins.hash_password(data.password)
    database = request.app.state.database
    async with database.writer_turn(), request_transaction(database.write_sessions) as session:
        account_id = await reset_tokens.use(
            session, token=token, password_hash=password_hash, now=now, settings=settings
        )
    if account_id is None:  # used or expired in the meantime
        return _link_refused(request, settings)
    response = RedirectResponse("/dashboard/login?reset=1", status_code=303)
    # This browser's own session, if it had one, ended with the others.
    sessions.clear_session_cookie(response, settings)
    return response
