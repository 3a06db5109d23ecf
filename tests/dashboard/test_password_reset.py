"""Password reset by email, end to end against a real SMTP server (aiosmtpd on loopback): the link
sets a new password once, within its 30 minutes, and signs the account out everywhere; the request
answers the same whoever asks, mails only active accounts with a password, and is rate-limited."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.conftest import START
from tests.dashboard.conftest import PASSWORD, Browser, browser
from tests.dashboard.test_accessibility import check_page
from tests.sequences.smtp_server import Received, SmtpSink
from vpx.accounts import lifecycle
from vpx.accounts import service as account_service
from vpx.clock import FixedClock
from vpx.mail.outbox import outbox_of
from vpx.models import Account, AccountLogin
from vpx.models.dashboard import PasswordReset

PUBLIC_URL = "https://vpx.example.test"
NEW_PASSWORD = "a brand new passphrase"
LINK = re.compile(r"https://vpx\.example\.test/dashboard/reset\?token=[A-Za-z0-9_-]+")
SENT = "Check your email"
REFUSED = "This link does not work"


@pytest.fixture
def sink() -> Iterator[SmtpSink]:
    with SmtpSink() as running:
        yield running


@pytest.fixture
async def reset_app(make_app: Callable[..., Awaitable[FastAPI]], sink: SmtpSink) -> FastAPI:
    return await make_app(
        smtp_url=f"smtp://127.0.0.1:{sink.port}",
        public_url=PUBLIC_URL,
        login_rate_limit="1000/minute",
        signup_rate_limit="1000/minute",
        password_reset_rate_limit="1000/hour",
    )


@pytest.fixture
async def web(reset_app: FastAPI) -> AsyncIterator[Browser]:
    async with browser(reset_app) as http:
        yield Browser(http)


@pytest.fixture
async def other_web(reset_app: FastAPI) -> AsyncIterator[Browser]:
    async with browser(reset_app) as http:
        yield Browser(http)


@pytest.fixture
async def anonymous(reset_app: FastAPI) -> AsyncIterator[Browser]:
    async with browser(reset_app) as http:
        yield Browser(http)


async def ask_for_reset(app: FastAPI, who: Browser, email: str) -> Any:
    """Submits the forgot-password form, then waits for the email (if any) to be handed over."""
    response = await who.submit("/dashboard/forgot", "/dashboard/forgot", {"email": email})
    await outbox_of(app).drain()
    return response


def reset_mails(sink: SmtpSink) -> list[Received]:
    """The reset emails the server received (sign-ups send confirmation emails too)."""
    return [r for r in sink.received if r.message()["Subject"] == "Reset your vpx dashboard password"]


def link_in(sink: SmtpSink, index: int = -1) -> str:
    body = reset_mails(sink)[index].message().get_content()
    found = LINK.search(body)
    assert found, body
    return found.group(0)


def path_of(link: str) -> str:
    parts = urlsplit(link)
    return f"{parts.path}?{parts.query}"


def token_of(link: str) -> str:
    return link.rsplit("=", 1)[1]


async def set_password(who: Browser, link: str, password: str = NEW_PASSWORD) -> Any:
    """Posts the new-password form (with the browser's CSRF token, read from a page that still shows one)."""
    return await who.submit("/dashboard/forgot", "/dashboard/reset", {"token": token_of(link), "password": password})


async def test_a_reset_link_sets_a_new_password_once_and_signs_out_everywhere(
    reset_app: FastAPI, sink: SmtpSink, web: Browser, other_web: Browser, anonymous: Browser
) -> None:
    await web.sign_up("forgetful@example.com")
    assert (await other_web.sign_in("forgetful@example.com")).status_code == 303
    sign_in = (await anonymous.get("/dashboard/login")).text
    assert 'href="/dashboard/forgot">Forgot password?</a>' in sign_in

    asked = await ask_for_reset(reset_app, anonymous, " Forgetful@Example.com ")
    assert asked.status_code == 200 and SENT in asked.text

    # One email, to the account's address, from the service, with a link to the public URL.
    assert len(reset_mails(sink)) == 1
    message = reset_mails(sink)[0].message()
    assert reset_mails(sink)[0].recipients == ["forgetful@example.com"]
    assert message["To"] == "forgetful@example.com"
    assert message["From"] == "vpx <no-reply@vpx.example.test>"
    assert message["Subject"] == "Reset your vpx dashboard password"
    link = link_in(sink)
    token = token_of(link)
    assert len(token) == 43  # 32 random bytes

    # Only the token's SHA-256 is stored, with its expiry.
    async with reset_app.state.database.read_sessions() as session:
        rows = (await session.scalars(select(PasswordReset))).all()
    assert [(r.id, r.expires_at) for r in rows] == [
        (hashlib.sha256(token.encode()).hexdigest(), START + timedelta(minutes=30))
    ]

    page = await anonymous.get(path_of(link))
    assert page.status_code == 200 and "forgetful@example.com" in page.text
    assert page.headers["referrer-policy"] == "no-referrer"
    await check_page(anonymous, path_of(link))

    done = await set_password(anonymous, link)
    assert done.status_code == 303 and done.headers["location"] == "/dashboard/login?reset=1"
    assert "Your password has been changed" in (await anonymous.get("/dashboard/login?reset=1")).text

    # Every session of the account has ended.
    for signed_in in (web, other_web):
        page = await signed_in.get("/dashboard/keys")
        assert page.status_code == 303 and page.headers["location"].startswith("/dashboard/login")

    # The old password no longer works; the new one does (hashed with argon2id).
    assert (await anonymous.sign_in("forgetful@example.com", PASSWORD)).status_code == 401
    assert (await other_web.sign_in("forgetful@example.com", NEW_PASSWORD)).status_code == 303
    async with reset_app.state.database.read_sessions() as session:
        login = await session.scalar(select(AccountLogin))
        assert (await session.scalars(select(PasswordReset))).all() == []
    assert login is not None and login.password_hash.startswith("$argon2id$") and login.password_changed_at == START

    # The link works once.
    again = await set_password(anonymous, link, "yet another passphrase")
    assert again.status_code == 410 and REFUSED in again.text
    assert (await anonymous.get(path_of(link))).status_code == 410
    assert (await web.sign_in("forgetful@example.com", NEW_PASSWORD)).status_code == 303


async def test_an_expired_link_is_refused(
    reset_app: FastAPI, sink: SmtpSink, web: Browser, anonymous: Browser, clock: FixedClock
) -> None:
    await web.sign_up("late@example.com")
    await ask_for_reset(reset_app, anonymous, "late@example.com")
    link = link_in(sink)

    clock.set(START + timedelta(minutes=29, seconds=59))
    assert (await anonymous.get(path_of(link))).status_code == 200
    clock.set(START + timedelta(minutes=30))
    page = await anonymous.get(path_of(link))
    assert page.status_code == 410 and REFUSED in page.text and 'href="/dashboard/forgot"' in page.text
    refused = await set_password(anonymous, link)
    assert refused.status_code == 410
    assert (await anonymous.sign_in("late@example.com", NEW_PASSWORD)).status_code == 401
    assert (await anonymous.sign_in("late@example.com", PASSWORD)).status_code == 303

    # A new request works, and the expired token is cleared away.
    await ask_for_reset(reset_app, anonymous, "late@example.com")
    assert (await set_password(anonymous, link_in(sink))).status_code == 303
    async with reset_app.state.database.read_sessions() as session:
        assert (await session.scalars(select(PasswordReset))).all() == []


async def test_every_address_gets_the_same_answer_and_only_active_accounts_with_a_password_get_email(
    reset_app: FastAPI, sink: SmtpSink, web: Browser, other_web: Browser, anonymous: Browser, clock: FixedClock
) -> None:
    await web.sign_up("known@example.com")
    await other_web.sign_up("suspended@example.com")
    async with reset_app.state.database.write_sessions() as session:
        suspended = await session.scalar(select(Account.id).where(Account.email == "suspended@example.com"))
        assert suspended is not None
        await lifecycle.suspend(session, account_id=suspended, reason="test", actor="test", now=START)
        # An account an operator created has no dashboard password.
        settings = reset_app.state.settings
        await account_service.create_account(
            session, name="API only", email="api-only@example.com", plan="free", now=START, settings=settings
        )
        await session.commit()

    answers = {}
    for email in ("known@example.com", "nobody@example.com", "suspended@example.com", "api-only@example.com"):
        response = await ask_for_reset(reset_app, anonymous, email)
        answers[email] = (response.status_code, response.text.replace(email, "EMAIL"))
    assert len(set(answers.values())) == 1, answers
    assert next(iter(answers.values()))[0] == 200
    assert [r.recipients for r in reset_mails(sink)] == [["known@example.com"]]


async def test_a_link_stops_working_when_the_account_is_suspended(
    reset_app: FastAPI, sink: SmtpSink, web: Browser, anonymous: Browser
) -> None:
    await web.sign_up("held@example.com")
    await ask_for_reset(reset_app, anonymous, "held@example.com")
    async with reset_app.state.database.write_sessions() as session:
        account_id = await session.scalar(select(Account.id).where(Account.email == "held@example.com"))
        assert account_id is not None
        await lifecycle.suspend(session, account_id=account_id, reason="test", actor="test", now=START)
        await session.commit()
    assert (await anonymous.get(path_of(link_in(sink)))).status_code == 410
    assert (await set_password(anonymous, link_in(sink))).status_code == 410


async def test_the_new_password_follows_the_sign_up_rules(
    reset_app: FastAPI, sink: SmtpSink, web: Browser, anonymous: Browser
) -> None:
    await web.sign_up("rules@example.com")
    await ask_for_reset(reset_app, anonymous, "rules@example.com")
    link = link_in(sink)
    short = await set_password(anonymous, link, "too short")
    assert short.status_code == 422
    assert 'id="password-error"' in short.text and 'aria-invalid="true"' in short.text
    # Refused input spends nothing: the same link still works.
    assert (await set_password(anonymous, link)).status_code == 303


async def test_reset_forms_need_their_csrf_token(
    reset_app: FastAPI, sink: SmtpSink, web: Browser, anonymous: Browser
) -> None:
    await web.sign_up("csrf@example.com")
    forged = await anonymous.http.post("/dashboard/forgot", data={"email": "csrf@example.com"})
    assert forged.status_code == 403
    await outbox_of(reset_app).drain()
    assert reset_mails(sink) == []

    await ask_for_reset(reset_app, anonymous, "csrf@example.com")
    link = link_in(sink)
    token = await anonymous.token(path_of(link))
    no_token = await anonymous.http.post("/dashboard/reset", data={"token": token_of(link), "password": NEW_PASSWORD})
    cross_site = await anonymous.http.post(
        "/dashboard/reset",
        data={"csrf_token": token, "token": token_of(link), "password": NEW_PASSWORD},
        headers={"Sec-Fetch-Site": "cross-site"},
    )
    assert no_token.status_code == 403 and cross_site.status_code == 403
    assert (await anonymous.sign_in("csrf@example.com", PASSWORD)).status_code == 303
    assert (await set_password(anonymous, link)).status_code == 303


async def test_reset_requests_are_limited_per_address_and_per_email(
    make_app: Callable[..., Awaitable[FastAPI]], sink: SmtpSink
) -> None:
    app = await make_app(smtp_url=f"smtp://127.0.0.1:{sink.port}", password_reset_rate_limit="2/hour")
    async with (
        browser(app, "198.51.100.1") as one,
        browser(app, "198.51.100.2") as two,
        browser(app, "198.51.100.3") as three,
    ):
        first, second, third = Browser(one), Browser(two), Browser(three)
        # Per client address, whatever the emails.
        assert (await ask_for_reset(app, first, "a@example.com")).status_code == 200
        assert (await ask_for_reset(app, first, "b@example.com")).status_code == 200
        limited = await ask_for_reset(app, first, "c@example.com")
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) > 0
        # Per email, whatever the addresses.
        assert (await ask_for_reset(app, second, "a@example.com")).status_code == 200
        assert (await ask_for_reset(app, third, "a@example.com")).status_code == 429


async def test_the_answer_does_not_wait_for_the_smtp_server(
    reset_app: FastAPI, sink: SmtpSink, web: Browser, anonymous: Browser
) -> None:
    await web.sign_up("patient@example.com")
    release, answered = threading.Event(), []

    def hold(received: object) -> None:  # the server takes its time before answering DATA
        release.wait(10)
        answered.append(received)

    sink.on_accept = hold
    try:
        response = await anonymous.submit("/dashboard/forgot", "/dashboard/forgot", {"email": "patient@example.com"})
        assert response.status_code == 200 and SENT in response.text
        assert answered == []  # the page came back while the server still held its answer
    finally:
        release.set()
    await outbox_of(reset_app).drain()
    assert len(answered) == 1 and [r.recipients for r in reset_mails(sink)] == [["patient@example.com"]]


async def test_the_forgot_password_page_is_accessible(anonymous: Browser) -> None:
    await check_page(anonymous, "/dashboard/forgot")
    invalid = await anonymous.submit("/dashboard/forgot", "/dashboard/forgot", {"email": "not an email"})
    assert invalid.status_code == 422 and 'id="email-error"' in invalid.text
