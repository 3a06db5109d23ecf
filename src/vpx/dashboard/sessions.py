"""Dashboard sign-in sessions and CSRF protection.

A session is a random token in a cookie (Secure, HttpOnly, SameSite=Lax); the database keeps only
its SHA-256, with the account and the session's CSRF token. Every form of a signed-in page carries
that token (synchronizer pattern); the sign-in and sign-up forms, before any session exists, carry
a token that must match a cookie of its own (double submit). A form whose browser says it comes
from another site (Sec-Fetch-Site: cross-site) is refused whatever it carries (vpx.auth.csrf, as the
operator page's forms).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated

from fastapi import Depends, Request, Response
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.datastructures import FormData

from vpx.auth.csrf import PageCookies
from vpx.config import Settings
from vpx.dashboard.web import CsrfRefused, SignInRequired
from vpx.models import Account, DashboardSession

SESSION_COOKIE = "vpx_session"
CSRF_COOKIE = "vpx_csrf"
COOKIE_PATH = "/dashboard"
COOKIES = PageCookies(csrf_cookie=CSRF_COOKIE, path=COOKIE_PATH, same_site="lax", refused=CsrfRefused)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class SignedIn:
    """The account a dashboard request acts for."""

    account_id: str
    email: str
    csrf_token: str
    session_id: str


async def start_session(session: AsyncSession, *, account_id: str, now: datetime, settings: Settings) -> str:
    """A new session for the account; returns the cookie's token. The account's expired sessions go."""
    await session.execute(
        delete(DashboardSession).where(DashboardSession.account_id == account_id, DashboardSession.expires_at <= now)
    )
    token = secrets.token_urlsafe(32)
    session.add(
        DashboardSession(
            id=_digest(token),
            account_id=account_id,
            csrf_token=secrets.token_urlsafe(32),
            created_at=now,
            expires_at=now + timedelta(hours=settings.dashboard_session_hours),
        )
    )
    await session.flush()
    return token


async def find_session(session: AsyncSession, *, token: str, now: datetime) -> SignedIn | None:
    if not token or len(token) > 128:
        return None
    row = (
        await session.execute(
            select(DashboardSession.id, DashboardSession.account_id, DashboardSession.csrf_token, Account.email)
            .join(Account, Account.id == DashboardSession.account_id)
            .where(
                DashboardSession.id == _digest(token),
                DashboardSession.expires_at > now,
                Account.status == "active",  # a suspended account's sessions sign in no more
            )
        )
    ).one_or_none()
    if row is None:
        return None
    return SignedIn(account_id=row.account_id, email=row.email or "", csrf_token=row.csrf_token, session_id=row.id)


async def end_session(session: AsyncSession, *, session_id: str) -> None:
    await session.execute(delete(DashboardSession).where(DashboardSession.id == session_id))


def set_session_cookie(response: Response, token: str, settings: Settings) -> None:
    COOKIES.set(response, SESSION_COOKIE, token, settings, max_age=settings.dashboard_session_hours * 3600)


def clear_session_cookie(response: Response, settings: Settings) -> None:
    COOKIES.forget(response, SESSION_COOKIE, settings)


async def current_user(request: Request) -> SignedIn | None:
    """The signed-in account of this browser, if any (looked up once per request)."""
    if hasattr(request.state, "signed_in"):
        found: SignedIn | None = request.state.signed_in
        return found
    token = request.cookies.get(SESSION_COOKIE, "")
    found = None
    if token:
        state = request.app.state
        async with state.database.read_sessions() as session:
            found = await find_session(session, token=token, now=state.clock.now())
    request.state.signed_in = found
    return found


async def require_user(request: Request) -> SignedIn:
    user = await current_user(request)
    if user is None:
        raise SignInRequired()
    return user


def anonymous_csrf_token(request: Request) -> str:
    """The double-submit token of a signed-out browser: its cookie's, or a new one that the page
    must set (see ``remember_anonymous_token``)."""
    return COOKIES.anonymous_token(request)


def remember_anonymous_token(request: Request, response: Response) -> None:
    COOKIES.remember_anonymous_token(request, response)


async def signed_in_form(request: Request, user: Annotated[SignedIn, Depends(require_user)]) -> FormData:
    """The form of a signed-in page, once its CSRF token has been checked."""
    return await COOKIES.checked_form(request, user.csrf_token)


async def anonymous_form(request: Request) -> FormData:
    """The sign-in or sign-up form, once its token has been checked against the CSRF cookie."""
    return await COOKIES.anonymous_form(request)


User = Annotated[SignedIn, Depends(require_user)]
UserForm = Annotated[FormData, Depends(signed_in_form)]
AnonymousForm = Annotated[FormData, Depends(anonymous_form)]
