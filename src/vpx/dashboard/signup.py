"""Sign-up, confirmed by email (D8: the free plan, no payment card).

A sign-up for a new address makes the account, not confirmed yet: it cannot sign in and has no free
credits. The address gets a single-use link that works for 24 hours (vpx.dashboard.confirmations);
following it asks for the account's password, then confirms the address, starts the free credits and
signs in. A sign-up for an address that has an account changes nothing and emails its owner a notice.
Both answer the same page, with the same status, after the same password hashing; the email goes after
the answer (vpx.mail.outbox). Without a way to send email, there is no sign-up (vpx.dashboard.mailing).
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import Query, Request, Response
from fastapi.responses import RedirectResponse
from pydantic import ValidationError

from vpx.config import Settings
from vpx.dashboard import confirmations, logins, mailing, sessions
from vpx.dashboard.pages import anonymous_page, dashboard_router, field_errors, form_values
from vpx.dashboard.sessions import AnonymousForm
from vpx.dashboard.throttle import client_address, spend_attempt
from vpx.dashboard.web import render
from vpx.db import ReadSession, request_transaction
from vpx.deps import AppSettings, Now
from vpx.mail.outbox import Letter, outbox_of

router = dashboard_router()

TITLE = "Create a free account"
CONFIRM_SUBJECT = "Confirm your email address for vpx"
TAKEN_SUBJECT = "Someone tried to sign up for vpx with your address"
WRONG_PASSWORD = "The password is not right: use the one you chose when you signed up."


def _base(settings: Settings) -> str:
    return settings.public_url.rstrip("/")


def confirm_link(settings: Settings, token: str) -> str:
    # The token travels in the query string: the access log records paths without it.
    return f"{_base(settings)}/dashboard/confirm?{urlencode({'token': token})}"


def confirmation_letter(*, email: str, account_id: str, settings: Settings, token: str) -> Letter:
    text = (
        f"Someone, you we hope, created a vpx dashboard account with the address {email}.\n"
        "To confirm the address and start the free plan's credits, open this link and sign in\n"
        "with the password you chose:\n"
        "\n"
        f"{confirm_link(settings, token)}\n"
        "\n"
        f"The link works once, for {confirmations.CONFIRMATION_HOURS} hours. After that, signing in with\n"
        "your email address and password sends a new one.\n"
        "\n"
        "If you did not sign up, ignore this email: the account stays unconfirmed and no one can\n"
        "sign in to it.\n"
    )
    return Letter(
        to=email, subject=CONFIRM_SUBJECT, text=text, purpose="sign-up confirmation", account_id=account_id,
        secrets=(token,),
    )  # fmt: skip


def taken_letter(*, email: str, account_id: str, settings: Settings) -> Letter:
    text = (
        f"Someone tried to create a vpx dashboard account with the address {email}, which has one\n"
        "already. Nothing has changed.\n"
        "\n"
        "If it was you, sign in:\n"
        f"{_base(settings)}/dashboard/login\n"
        "\n"
        "Forgot your password? Choose a new one here:\n"
        f"{_base(settings)}/dashboard/forgot\n"
        "\n"
        "If it was not you, ignore this email.\n"
    )
    return Letter(to=email, subject=TAKEN_SUBJECT, text=text, purpose="sign-up notice", account_id=account_id)


@router.get("/signup")
async def signup_page(request: Request, settings: AppSettings) -> Response:
    if not mailing.can_send(settings):
        return mailing.unavailable_page(request, "signup", status=200)
    return anonymous_page(request, "signup.html", {"title": TITLE, "values": {}, "errors": {}})


@router.post("/signup")
async def signup(request: Request, form: AnonymousForm, settings: AppSettings, now: Now) -> Response:
    """D8: a free-plan account, 25 credits a month once its address is confirmed, no payment card.
    Sign-ups are limited per client address and per email address (each new account gets free credits,
    each sign-up an email)."""
    if not mailing.can_send(settings):
        return mailing.unavailable_page(request, "signup", status=403)
    values = form_values(form, "email", "name")
    try:
        data = logins.SignUpForm(**form_values(form, "email", "password", "name"))
    except ValidationError as exc:
        context = {"title": TITLE, "values": values, "errors": field_errors(exc)}
        return anonymous_page(request, "signup.html", context, status=422)
    await spend_attempt(
        request, settings.signup_rate_limit, ("signup-ip", client_address(request)), ("signup-email", data.email)
    )
    # Hashed whether or not the address is taken, so that both answers take as long; and before the
    # write transaction, which holds SQLite's write lock.
    password_hash = await logins.hash_password(data.password)
    token = confirmations.new_token()
    database = request.app.state.database
    async with database.writer_turn(), request_transaction(database.write_sessions) as session:
        done = await logins.sign_up(
            session, form=data, password_hash=password_hash, token=token, now=now, settings=settings
        )
    letter: Letter | None = None
    if done.created and done.account_id is not None:
        letter = confirmation_letter(email=data.email, account_id=done.account_id, settings=settings, token=token)
    elif done.account_id is not None:
        letter = taken_letter(email=data.email, account_id=done.account_id, settings=settings)
    sent: dict[str, object] = {
        "title": "Check your email",
        "email": data.email,
        "hours": confirmations.CONFIRMATION_HOURS,
    }
    response = render(request, "signup_sent.html", sent)
    if letter is not None:
        response.background = outbox_of(request.app).after_response(letter)
    return response


def _link_refused(request: Request) -> Response:
    context = {"title": "This link does not work", "hours": confirmations.CONFIRMATION_HOURS}
    return render(request, "confirm_refused.html", context, status=410)


def _form_page(request: Request, token: str, email: str, errors: dict[str, str], status: int = 200) -> Response:
    context = {"title": "Confirm your email address", "token": token, "email": email, "errors": errors}
    response = anonymous_page(request, "confirm.html", context, status=status)
    # The page's address holds the token: sent nowhere else, not even to this site's own files.
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@router.get("/confirm")
async def confirm_page(
    request: Request, session: ReadSession, now: Now, token: Annotated[str, Query(max_length=500)] = ""
) -> Response:
    """Shows the form only; a link opened by a mail scanner spends nothing."""
    target = await confirmations.find(session, token=token, now=now)
    if target is None:
        return _link_refused(request)
    return _form_page(request, token, target.email, {})


@router.post("/confirm")
async def confirm(
    request: Request, form: AnonymousForm, reader: ReadSession, settings: AppSettings, now: Now
) -> Response:
    """The account's password, then the address confirmed, the free credits started and a session.
    Asking for the password means that a link sent after someone else signed up with your address
    gives you no account whose password they know."""
    token = str(form.get("token") or "")
    target = await confirmations.find(reader, token=token, now=now)
    if target is None:
        return _link_refused(request)
    # Guesses at the password are limited per link, as sign-in attempts are per email.
    await spend_attempt(request, settings.login_rate_limit, ("confirm-link", token))
    password = str(form.get("password") or "")
    checked = logins.PasswordCheck(account_id=None)
    if 0 < len(password) <= logins.MAX_PASSWORD:
        checked = await logins.check_password(reader, email=target.email, password=password)
    if checked.account_id != target.account_id:
        return _form_page(request, token, target.email, {"password": WRONG_PASSWORD}, status=401)
    database = request.app.state.database
    async with database.writer_turn(), request_transaction(database.write_sessions) as session:
        account_id = await confirmations.confirm(session, token=token, now=now, settings=settings)
        if account_id is None:  # used, replaced or expired in the meantime
            return _link_refused(request)
        await logins.record_sign_in(session, account_id=account_id, now=now)
        session_token = await sessions.start_session(session, account_id=account_id, now=now, settings=settings)
    response = RedirectResponse("/dashboard?welcome=1", status_code=303)
    sessions.set_session_cookie(response, session_token, settings)
    return response
