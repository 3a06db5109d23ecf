"""Dashboard fixtures: a browser-like client (cookies, https) and helpers to sign up and post forms."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher
from fastapi import FastAPI
from sqlalchemy import select

from tests import conftest
from vpx.app import create_app
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.dashboard import confirmations, logins
from vpx.mail.outbox import outbox_of
from vpx.models import Account

PASSWORD = "correct horse battery staple"
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture(autouse=True)
def quick_password_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """argon2id still, but with a small cost: the production cost (64 MiB, 3 passes) is for attackers,
    not for a test suite that signs up a hundred accounts. The browser tests' server keeps it."""
    monkeypatch.setattr(logins, "_hasher", PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1))
    logins._decoy_hash.cache_clear()


@pytest.fixture
def settings(database_url: str) -> Settings:
    # The dashboard's emails go to the log (development's way), unless a test gives an SMTP server.
    return conftest.test_settings(
        database_url, login_rate_limit="1000/minute", signup_rate_limit="1000/minute", mail_to_log=True
    )


@pytest.fixture
async def make_app(database_url: str, clock: FixedClock) -> AsyncIterator[Callable[..., Awaitable[FastAPI]]]:
    """An app with other settings, on an emptied database."""
    made: list[FastAPI] = []

    async def make(**overrides: Any) -> FastAPI:
        application = create_app(
            conftest.test_settings(database_url, **{"mail_to_log": True, **overrides}), clock=clock
        )
        await conftest.wipe(application.state.database)
        made.append(application)
        return application

    yield make
    for application in made:
        await application.state.database.dispose()


class Browser:
    """An httpx client that keeps cookies like a browser and reads CSRF tokens from pages."""

    def __init__(self, http: httpx.AsyncClient, app: FastAPI | None = None) -> None:
        """``app``: for a client of a live server, an app on its database (to confirm sign-ups)."""
        self.http = http
        self.app = app
        self.email = ""

    async def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return await self.http.get(path, **kwargs)

    async def token(self, page: str) -> str:
        response = await self.http.get(page)
        found = TOKEN.search(response.text)
        assert found, f"no CSRF token on {page} ({response.status_code})"
        return found.group(1)

    async def submit(self, page: str, action: str, data: dict[str, str]) -> httpx.Response:
        """Posts a form the way a browser does: with the token of the page it was on."""
        token = await self.token(page)
        return await self.http.post(action, data={"csrf_token": token, **data})

    async def sign_up(self, email: str | None = None, password: str = PASSWORD) -> httpx.Response:
        """Signs up and confirms the address, which signs this browser in: the confirmation's answer
        (a redirect to the overview, with the session cookie)."""
        self.email = email or f"user-{uuid.uuid4().hex[:8]}@example.com"
        response = await self.submit(
            "/dashboard/signup", "/dashboard/signup", {"email": self.email, "password": password, "name": ""}
        )
        assert response.status_code == 200 and "Check your email" in response.text, response.text
        token = await self.confirmation_token()
        confirmed = await self.submit(
            f"/dashboard/confirm?token={token}", "/dashboard/confirm", {"token": token, "password": password}
        )
        assert confirmed.status_code == 303, confirmed.text
        return confirmed

    async def confirmation_token(self) -> str:
        """A new confirmation link's token for this browser's address (the email the sign-up sent is
        handed over first: tests count emails)."""
        transport = self.http._transport
        if isinstance(transport, httpx.ASGITransport):
            app = transport.app
            assert isinstance(app, FastAPI)
            await outbox_of(app).drain()
            return await issue_confirmation(app, self.email, app.state.clock.now())
        assert self.app is not None, "a live server's browser needs an app on its database"
        return await issue_confirmation(self.app, self.email, datetime.now(UTC))  # the live server's real time

    async def sign_in(self, email: str, password: str = PASSWORD) -> httpx.Response:
        return await self.submit("/dashboard/login", "/dashboard/login", {"email": email, "password": password})

    async def create_key(self, key_type: str = "live", name: str = "ci", ip_allowlist: str = "") -> httpx.Response:
        data = {"type": key_type, "name": name, "ip_allowlist": ip_allowlist}
        return await self.submit("/dashboard/keys", "/dashboard/keys", data)

    async def account_id(self) -> str:
        key = await self.create_key("ro", name="whoami")
        secret = secret_of(key.text)
        account = await self.http.get("/api/v1/account", headers={"X-API-Key": secret})
        return str(account.json()["id"])


async def issue_confirmation(app: FastAPI, email: str, now: datetime) -> str:
    """A new confirmation link's token for the address, as signing in with the password would send one
    (the earlier link stops working)."""
    token = confirmations.new_token()
    async with app.state.database.write_sessions() as session, session.begin():
        account_id = await session.scalar(select(Account.id).where(Account.email == email.strip().lower()))
        assert account_id is not None, f"no account {email}"
        await confirmations.issue(session, account_id=account_id, token=token, now=now)
    return token


def secret_of(page: str) -> str:
    found = re.search(r'data-testid="secret"[^>]*|value="(vpx_[a-z]+_[A-Za-z0-9]+)"', page)
    match = re.search(r'value="(vpx_(?:ro|live|full)_[A-Za-z0-9]+)"', page)
    assert found and match, "no secret on the page"
    return match.group(1)


def browser(app: FastAPI, client_ip: str = "127.0.0.1") -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(client_ip, 50000))
    return httpx.AsyncClient(transport=transport, base_url="https://testserver")


@pytest.fixture
async def web(app: FastAPI) -> AsyncIterator[Browser]:
    async with browser(app) as http:
        yield Browser(http)


@pytest.fixture
async def other_web(app: FastAPI) -> AsyncIterator[Browser]:
    async with browser(app) as http:
        yield Browser(http)
