"""Operator sessions, kept on the server, and the marks of browsers that signed in before.

Signing in with an admin token gives the browser a cookie holding a random token; the database keeps
only its SHA-256 (operator_sessions), with the admin token's name, a keyed hash of the admin token
(never the token), the session's CSRF token and its end. Every process reads the same rows, so signing
out (the row deleted) ends every copy of the cookie at once, wherever it is replayed. Each request also
checks that the admin token the session was made with is still configured with the same value:
changing or removing a token ends its sessions, as rotating the secret keys ends all of them (the
keyed hash changes with the keys). Signing in always starts a new session, whatever session cookie the
browser sent, and ends that one: a session cookie planted in a browser before sign-in never becomes
the signed-in session.

A browser that signs in also gets a second cookie, sealed with the service's secret keys, marking it
as known to the admin token it signed in with (for KNOWN_BROWSER_DAYS): its sign-in attempts count
against the failed-token budget of that token's known browsers instead of its address's, so someone
sending wrong tokens from the operator's address (an office's NAT) cannot lock the operator's own
browser out. The mark opens nothing by itself, and only a right token gets one; one budget per token,
not per mark, so that whoever holds a token cannot make marks by the dozen to guess another token
faster.

Forms are protected as the dashboard's are (vpx.auth.csrf): the sign-in form by a token that
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
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from vpx.auth.csrf import PageCookies
from vpx.config import Settings
from vpx.models import OperatorSession
from vpx.secrets.box import SecretBox, SecretsUnavailable

SESSION_COOKIE = "vpx_operator"
CSRF_COOKIE = "vpx_operator_csrf"
KNOWN_BROWSER_COOKIE = "vpx_operator_browser"
COOKIE_PATH = "/operator"
SESSION_HOURS = 8
KNOWN_BROWSER_DAYS = 30
TOKEN_HASH_PURPOSE = "operator page sessions"
MAX_TOKEN = 128
MAX_COOKIE = 2000


class FormRefused(Exception):
    """A form without the right CSRF token, or sent from another site."""


COOKIES = PageCookies(csrf_cookie=CSRF_COOKIE, path=COOKIE_PATH, same_site="strict", refused=FormRefused)


@dataclass(frozen=True)
class Operator:
    """Who an operator page request acts for: the admin token's name, and the session's row."""

    name: str
    csrf_token: str
    expires_at: datetime
    session_id: str


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _token_hash(box: SecretBox, token: str) -> str:
    key = box.derive_key(TOKEN_HASH_PURPOSE)
    return hmac.new(key, token.encode(), hashlib.sha256).hexdigest()


def _same(left: str, right: str) -> bool:
    return hmac.compare_digest(left.encode(), right.encode())


def presented_session_id(request: Request) -> str | None:
    """The row id of the session cookie this browser sent, whatever it is worth."""
    token = request.cookies.get(SESSION_COOKIE, "")
    return _digest(token) if token and len(token) <= MAX_TOKEN else None


async def start_session(
    session: AsyncSession, *, name: str, token: str, box: SecretBox, now: datetime, replacing: str | None
) -> str:
    """A new session for the admin token ``token`` (named ``name``), just checked; returns the cookie's
    value. The session the browser presented (``replacing``, if any) ends, and so do expired ones."""
    ended = OperatorSession.expires_at <= now
    if replacing is not None:
        ended = ended | (OperatorSession.id == replacing)
    await session.execute(delete(OperatorSession).where(ended))
    cookie = secrets.token_urlsafe(32)
    session.add(
        OperatorSession(
            id=_digest(cookie),
            token_name=name,
            token_hash=_token_hash(box, token),
            csrf_token=secrets.token_urlsafe(32),
            created_at=now,
            expires_at=now + timedelta(hours=SESSION_HOURS),
        )
    )
    await session.flush()
    return cookie


async def end_session(session: AsyncSession, *, session_id: str) -> None:
    """Ends the session for every copy of its cookie."""
    await session.execute(delete(OperatorSession).where(OperatorSession.id == session_id))


async def find_operator(
    session: AsyncSession, *, session_id: str, box: SecretBox, settings: Settings, now: datetime
) -> Operator | None:
    """The session's operator, if the session exists, has not expired, and was made with an admin
    token still configured with the same value."""
    row = await session.scalar(
        select(OperatorSession).where(OperatorSession.id == session_id, OperatorSession.expires_at > now)
    )
    if row is None:
        return None
    token = settings.named_admin_tokens().get(row.token_name)
    if token is None or not _same(row.token_hash, _token_hash(box, token)):
        return None
    return Operator(name=row.token_name, csrf_token=row.csrf_token, expires_at=row.expires_at, session_id=row.id)


async def current_operator(request: Request) -> Operator | None:
    """The operator this browser is signed in as, if any (looked up once per request)."""
    if hasattr(request.state, "signed_in_operator"):
        known: Operator | None = request.state.signed_in_operator
        return known
    found = None
    session_id = presented_session_id(request)
    if session_id is not None:
        state = request.app.state
        async with state.database.read_sessions() as session:
            found = await find_operator(
                session, session_id=session_id, box=state.secrets, settings=state.settings, now=state.clock.now()
            )
    request.state.signed_in_operator = found
    return found


def set_session_cookie(response: Response, cookie: str, settings: Settings) -> None:
    """Sets the new session's cookie; the sign-in form's cookie has served its purpose."""
    COOKIES.set(response, SESSION_COOKIE, cookie, settings, max_age=SESSION_HOURS * 3600)
    COOKIES.forget(response, CSRF_COOKIE, settings)


def clear_session_cookie(response: Response, settings: Settings) -> None:
    COOKIES.forget(response, SESSION_COOKIE, settings)


def mark_known_browser(response: Response, *, token: str, box: SecretBox, now: datetime, settings: Settings) -> None:
    """Marks the browser that just signed in with ``token`` as known to it: the failed-token budget of
    that token's known browsers, for as long as the token is configured with the same value."""
    expires_at = now + timedelta(days=KNOWN_BROWSER_DAYS)
    payload = {"token_hash": _token_hash(box, token), "expires": expires_at.timestamp()}
    COOKIES.set(
        response, KNOWN_BROWSER_COOKIE, box.seal(json.dumps(payload)), settings, max_age=KNOWN_BROWSER_DAYS * 86400
    )


def known_browser_budget(request: Request) -> str | None:
    """The failed-token budget of the known browsers of the admin token this browser signed in with
    before, if its mark opens, has not expired and was made with a token still configured with the
    same value; else None."""
    sealed = request.cookies.get(KNOWN_BROWSER_COOKIE, "")
    if not sealed or len(sealed) > MAX_COOKIE:
        return None
    state = request.app.state
    box: SecretBox = state.secrets
    try:
        payload = json.loads(box.open(sealed))
        token_hash, expires = payload["token_hash"], payload["expires"]
    except (SecretsUnavailable, ValueError, KeyError, TypeError):
        return None
    if not isinstance(token_hash, str) or not isinstance(expires, int | float):
        return None
    if expires <= state.clock.now().timestamp():
        return None
    configured = state.settings.named_admin_tokens().values()
    if not any(_same(token_hash, _token_hash(box, token)) for token in configured):
        return None
    # Never an address: the two kinds of budget cannot meet.
    return f"known-browsers:{_digest(token_hash)[:32]}"


def anonymous_csrf_token(request: Request) -> str:
    """The sign-in form's double-submit token: its cookie's, or a new one that the page must set
    (``remember_anonymous_token``)."""
    return COOKIES.anonymous_token(request)


def remember_anonymous_token(request: Request, response: Response) -> None:
    COOKIES.remember_anonymous_token(request, response)


async def checked_form(request: Request, expected: str) -> FormData:
    """The form, once its CSRF token matched ``expected`` and its browser did not call it cross-site."""
    return await COOKIES.checked_form(request, expected)
