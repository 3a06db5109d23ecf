"""Operator sessions: a sealed cookie, no table.

Signing in with an admin token gives the browser a cookie sealed with the service's secret keys
(vpx.secrets: Fernet, so it can be neither read nor forged) that holds the token's name, a keyed hash
of the token (never the token), the session's CSRF token and its end. Each request opens it again and
checks that the token it was made with is still configured with the same value: removing or changing
a token ends its sessions, as rotating the secret keys ends all of them.

Forms are protected like the dashboard's (vpx.dashboard.sessions): the sign-in form by a token that
must match a cookie of its own (double submit), the signed-in form (sign-out) by the session's token;
a form whose browser says it comes from another site is refused whatever it carries. The cookies are
SameSite=Strict, HttpOnly, confined to /operator, and Secure unless VPX_DASHBOARD_PLAIN_HTTP is set (as
the dashboard's).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from fastapi import Request, Response
from starlette.datastructures import FormData

from vpx.config import Settings
from vpx.secrets.box import SecretBox, SecretsUnavailable

SESSION_COOKIE = "vpx_operator"
CSRF_COOKIE = "vpx_operator_csrf"
COOKIE_PATH = "/operator"
CSRF_FIELD = "csrf_token"
SESSION_HOURS = 8
TOKEN_HASH_PURPOSE = "operator page sessions"
MAX_COOKIE = 2000


class FormRefused(Exception):
    """A form without the right CSRF token, or sent from another site."""


@dataclass(frozen=True)
class Operator:
    """Who an operator page request acts for: the admin token's name."""

    name: str
    csrf_token: str
    expires_at: datetime


def _token_hash(box: SecretBox, token: str) -> str:
    key = box.derive_key(TOKEN_HASH_PURPOSE)
    return hmac.new(key, token.encode(), hashlib.sha256).hexdigest()


def secure_cookies(settings: Settings) -> bool:
    """Secure, as the dashboard's cookies are, unless the operator serves plain HTTP on purpose
    (VPX_DASHBOARD_PLAIN_HTTP, development)."""
    return not settings.dashboard_plain_http


def _cookie(response: Response, name: str, value: str, settings: Settings, max_age: int | None) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=COOKIE_PATH,
        secure=secure_cookies(settings),
        httponly=True,
        samesite="strict",
    )


def start_session(
    response: Response, *, name: str, token: str, box: SecretBox, now: datetime, settings: Settings
) -> None:
    """Sets the session cookie of the operator whose token (named ``name``) was just checked."""
    expires_at = now + timedelta(hours=SESSION_HOURS)
    payload = {
        "name": name,
        "token_hash": _token_hash(box, token),
        "csrf": secrets.token_urlsafe(32),
        "expires": expires_at.timestamp(),
    }
    _cookie(response, SESSION_COOKIE, box.seal(json.dumps(payload)), settings, SESSION_HOURS * 3600)
    response.delete_cookie(
        CSRF_COOKIE, path=COOKIE_PATH, secure=secure_cookies(settings), httponly=True, samesite="strict"
    )


def end_session(response: Response, settings: Settings) -> None:
    response.delete_cookie(
        SESSION_COOKIE, path=COOKIE_PATH, secure=secure_cookies(settings), httponly=True, samesite="strict"
    )


def current_operator(request: Request) -> Operator | None:
    """The operator this browser signed in as, if its cookie opens, has not expired, and was made with
    a token still configured with the same value."""
    sealed = request.cookies.get(SESSION_COOKIE, "")
    if not sealed or len(sealed) > MAX_COOKIE:
        return None
    state = request.app.state
    box: SecretBox = state.secrets
    try:
        payload = json.loads(box.open(sealed))
        name, token_hash, csrf, expires = payload["name"], payload["token_hash"], payload["csrf"], payload["expires"]
    except (SecretsUnavailable, ValueError, KeyError, TypeError):
        return None
    now: datetime = state.clock.now()
    if not isinstance(expires, int | float) or expires <= now.timestamp():
        return None
    token = state.settings.named_admin_tokens().get(name)
    if token is None or not hmac.compare_digest(str(token_hash).encode(), _token_hash(box, token).encode()):
        return None
    return Operator(name=str(name), csrf_token=str(csrf), expires_at=datetime.fromtimestamp(expires, tz=now.tzinfo))


def anonymous_csrf_token(request: Request) -> str:
    """The sign-in form's double-submit token: its cookie's, or a new one that the page must set
    (``remember_anonymous_token``)."""
    token = request.cookies.get(CSRF_COOKIE, "")
    if not token or len(token) > 128:
        token = secrets.token_urlsafe(32)
        request.state.new_operator_csrf = token
    return token


def remember_anonymous_token(request: Request, response: Response) -> None:
    token = getattr(request.state, "new_operator_csrf", None)
    if token:
        _cookie(response, CSRF_COOKIE, token, request.app.state.settings, None)


def _matches(sent: object, expected: str) -> bool:
    return isinstance(sent, str) and bool(expected) and hmac.compare_digest(sent.encode(), expected.encode())


async def checked_form(request: Request, expected: str) -> FormData:
    """The form, once its CSRF token matched ``expected`` and its browser did not call it cross-site."""
    if request.headers.get("sec-fetch-site", "").lower() == "cross-site":
        raise FormRefused()
    form = await request.form()
    if not _matches(form.get(CSRF_FIELD), expected):
        raise FormRefused()
    return form
