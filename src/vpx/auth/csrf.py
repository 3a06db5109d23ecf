"""The cookies of the service's own web pages (the dashboard, the operator page) and the CSRF checks of
their forms, one implementation for both; each set of pages names its cookies, their path and their
SameSite (``PageCookies``).

A form of a signed-in page carries the session's token (synchronizer pattern); a sign-in or sign-up
form, before any session exists, carries a token that must match a cookie of its own (double submit).
A form whose browser says it comes from another site (Sec-Fetch-Site: cross-site) is refused whatever
it carries. The cookies are HttpOnly, and Secure unless VPX_DASHBOARD_PLAIN_HTTP is set (development).
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from typing import Literal

from fastapi import Request, Response
from starlette.datastructures import FormData

from vpx.config import Settings

CSRF_FIELD = "csrf_token"
# A CSRF cookie longer than this is no token of ours: a new one is made.
MAX_TOKEN = 128


def secure_cookies(settings: Settings) -> bool:
    """Secure unless the operator serves plain HTTP on purpose (VPX_DASHBOARD_PLAIN_HTTP, development)."""
    return not settings.dashboard_plain_http


def _matches(sent: object, expected: str) -> bool:
    return isinstance(sent, str) and bool(expected) and hmac.compare_digest(sent.encode(), expected.encode())


@dataclass(frozen=True)
class PageCookies:
    """One set of pages' cookies: the sign-in form's CSRF cookie (``csrf_cookie``), the ``path`` they
    are confined to and their ``same_site``; a form that fails its check raises ``refused``."""

    csrf_cookie: str
    path: str
    same_site: Literal["lax", "strict"]
    refused: type[Exception]

    def set(self, response: Response, name: str, value: str, settings: Settings, *, max_age: int | None) -> None:
        """Sets cookie ``name`` (a browser-session cookie when ``max_age`` is None)."""
        response.set_cookie(
            name,
            value,
            max_age=max_age,
            path=self.path,
            secure=secure_cookies(settings),
            httponly=True,
            samesite=self.same_site,
        )

    def forget(self, response: Response, name: str, settings: Settings) -> None:
        """Tells the browser to drop cookie ``name``."""
        response.delete_cookie(
            name, path=self.path, secure=secure_cookies(settings), httponly=True, samesite=self.same_site
        )

    def anonymous_token(self, request: Request) -> str:
        """A signed-out browser's double-submit token: its cookie's, or a new one that the page must
        set (``remember_anonymous_token``)."""
        token = request.cookies.get(self.csrf_cookie, "")
        if not token or len(token) > MAX_TOKEN:
            token = secrets.token_urlsafe(32)
            setattr(request.state, self._new_token, token)
        return token

    def remember_anonymous_token(self, request: Request, response: Response) -> None:
        """Sets the CSRF cookie when ``anonymous_token`` made a new token for this request."""
        token = getattr(request.state, self._new_token, None)
        if token:
            self.set(response, self.csrf_cookie, token, request.app.state.settings, max_age=None)

    async def checked_form(self, request: Request, expected: str) -> FormData:
        """The form, once its CSRF token matched ``expected`` and its browser did not call it cross-site."""
        if request.headers.get("sec-fetch-site", "").lower() == "cross-site":
            raise self.refused()
        form = await request.form()
        if not _matches(form.get(CSRF_FIELD), expected):
            raise self.refused()
        return form

    async def anonymous_form(self, request: Request) -> FormData:
        """A signed-out browser's form, once its token matched the CSRF cookie."""
        return await self.checked_form(request, request.cookies.get(self.csrf_cookie, ""))

    @property
    def _new_token(self) -> str:
        return f"new_csrf_token_{self.csrf_cookie}"
