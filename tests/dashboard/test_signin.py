"""Sign-up on the free plan (D8), sign-in and sign-out: argon2 hashes, session cookies, rate limits."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.conftest import START
from tests.dashboard.conftest import PASSWORD, Browser, browser
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.models import Account, AccountLogin, DashboardSession


async def test_sign_up_opens_a_free_account_with_25_credits(web: Browser, app: FastAPI) -> None:
    response = await web.sign_up("New.Buyer@Example.com ")
    assert response.headers["location"] == "/dashboard?welcome=1"
    overview = await web.get("/dashboard?welcome=1")
    assert overview.status_code == 200
    assert 'data-testid="balance">25<' in overview.text
    assert "new.buyer@example.com" in overview.text
    async with app.state.database.read_sessions() as session:
        account = await session.scalar(select(Account).where(Account.email == "new.buyer@example.com"))
        assert account is not None and account.plan == "free"
        login = await session.get(AccountLogin, account.id)
    assert login is not None
    assert login.password_hash.startswith("$argon2id$") and PASSWORD not in login.password_hash


def test_production_passwords_use_argon2id_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    from argon2 import extract_parameters

    from vpx.dashboard import logins

    monkeypatch.undo()  # the real hasher, not the suite's quick one
    parameters = extract_parameters(logins._hasher.hash("x"))
    assert parameters.type.name == "ID" and parameters.memory_cost == 65536 and parameters.time_cost == 3


async def test_the_sign_up_page_asks_for_no_payment_card(web: Browser) -> None:
    page = (await web.get("/dashboard/signup")).text
    assert "No payment card needed" in page
    assert 'autocomplete="cc-' not in page and 'name="card' not in page


@pytest.mark.parametrize(
    ("email", "password", "field"),
    [("not-an-email", PASSWORD, "email"), ("ok@example.com", "short", "password"), ("", PASSWORD, "email")],
)
async def test_invalid_sign_up_is_refused_with_the_field_marked(
    web: Browser, app: FastAPI, email: str, password: str, field: str
) -> None:
    response = await web.submit("/dashboard/signup", "/dashboard/signup", {"email": email, "password": password})
    assert response.status_code == 422
    assert f'id="{field}-error"' in response.text and 'aria-invalid="true"' in response.text
    async with app.state.database.read_sessions() as session:
        assert (await session.scalars(select(Account))).all() == []


async def test_a_taken_email_gets_the_answer_a_new_one_gets(web: Browser, other_web: Browser, app: FastAPI) -> None:
    """No account probing through sign-up: the same page and status either way (the owner of a taken
    address is told by email; tests/dashboard/test_signup_confirmation.py)."""
    await web.sign_up("taken@example.com")
    data = {"email": "TAKEN@example.com", "password": PASSWORD}
    taken = await other_web.submit("/dashboard/signup", "/dashboard/signup", data)
    fresh = await other_web.submit(
        "/dashboard/signup", "/dashboard/signup", {"email": "fresh@example.com", "password": PASSWORD}
    )
    assert taken.status_code == fresh.status_code == 200
    assert "already exists" not in taken.text and "Check your email" in taken.text
    assert "vpx_session" not in taken.cookies
    async with app.state.database.read_sessions() as session:
        assert len((await session.scalars(select(Account))).all()) == 2


async def test_session_cookie_is_secure_http_only_and_lax(web: Browser) -> None:
    response = await web.sign_up()
    cookie = response.headers["set-cookie"]
    assert cookie.startswith("vpx_session=")
    for attribute in ("HttpOnly", "Secure", "SameSite=lax", "Path=/dashboard"):
        assert attribute.lower() in cookie.lower(), cookie


async def test_the_sign_in_form_sets_its_csrf_cookie(app: FastAPI) -> None:
    async with browser(app) as http:
        cookie = (await http.get("/dashboard/login")).headers["set-cookie"].lower()
    assert cookie.startswith("vpx_csrf=") and "httponly" in cookie and "secure" in cookie


async def test_plain_http_setting_drops_only_secure(make_app: Any) -> None:
    app = await make_app(dashboard_plain_http=True)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        response = await Browser(http).sign_up()
    cookie = response.headers["set-cookie"].lower()
    assert "secure" not in cookie and "httponly" in cookie and "samesite=lax" in cookie


async def test_sign_in_and_out(web: Browser, other_web: Browser, app: FastAPI) -> None:
    await web.sign_up("me@example.com")
    wrong = await other_web.sign_in("me@example.com", "not the password")
    assert wrong.status_code == 401 and "not right" in wrong.text
    unknown = await other_web.sign_in("nobody@example.com")
    assert unknown.status_code == 401 and unknown.text.count("not right") == wrong.text.count("not right")
    signed_in = await other_web.sign_in("ME@example.com")
    assert signed_in.status_code == 303 and signed_in.headers["location"] == "/dashboard"
    assert (await other_web.get("/dashboard/keys")).status_code == 200

    token = other_web.http.cookies["vpx_session"]
    out = await other_web.submit("/dashboard", "/dashboard/logout", {})
    assert out.status_code == 303 and out.headers["location"] == "/dashboard/login"
    # The session is gone from the server, not just from the browser.
    async with browser(app) as replaying:
        replaying.cookies.set("vpx_session", token)
        replay = await replaying.get("/dashboard/keys")
    assert replay.status_code == 303 and replay.headers["location"].startswith("/dashboard/login")
    assert (await web.get("/dashboard/keys")).status_code == 200  # the other browser stays signed in


async def test_pages_send_a_signed_out_browser_to_sign_in_and_back(web: Browser) -> None:
    response = await web.get("/dashboard/credits?cursor=abc")
    assert response.status_code == 303
    assert response.headers["location"] == "/dashboard/login?next=/dashboard/credits%3Fcursor%3Dabc"
    await web.sign_up("back@example.com")
    await web.submit("/dashboard", "/dashboard/logout", {})
    page = await web.get("/dashboard/login?next=/dashboard/revealed")
    assert 'name="next" value="/dashboard/revealed"' in page.text
    signed_in = await web.submit(
        "/dashboard/login?next=/dashboard/revealed",
        "/dashboard/login",
        {"email": "back@example.com", "password": PASSWORD, "next": "/dashboard/revealed"},
    )
    assert signed_in.headers["location"] == "/dashboard/revealed"


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example", "/dashboard//evil.example", "/api/v1"])
async def test_sign_in_never_redirects_off_the_dashboard(web: Browser, target: str) -> None:
    await web.sign_up("stay@example.com")
    await web.submit("/dashboard", "/dashboard/logout", {})
    response = await web.submit(
        "/dashboard/login", "/dashboard/login", {"email": "stay@example.com", "password": PASSWORD, "next": target}
    )
    assert response.headers["location"] == "/dashboard"


async def test_sessions_expire(web: Browser, clock: FixedClock, settings: Settings) -> None:
    await web.sign_up()
    clock.set(START + timedelta(hours=settings.dashboard_session_hours, seconds=1))
    assert (await web.get("/dashboard")).status_code == 303


async def test_sign_in_attempts_are_rate_limited(make_app: Any) -> None:
    app = await make_app(login_rate_limit="3/minute")
    async with browser(app) as http:
        web = Browser(http)
        await web.sign_up("limited@example.com")
        statuses = [(await web.sign_in("limited@example.com", f"guess {n}")).status_code for n in range(3)]
        assert statuses == [401, 401, 401]
        refused = await web.sign_in("limited@example.com")  # even the right password, once the budget is spent
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
        assert "Too many attempts" in refused.text
    async with browser(app, client_ip="198.51.100.7") as other_http:
        # Per email too: from another address, this email is refused, another email is not.
        elsewhere = Browser(other_http)
        assert (await elsewhere.sign_in("limited@example.com")).status_code == 429
        assert (await elsewhere.sign_in("someone-else@example.com")).status_code == 401


async def test_sign_ups_are_rate_limited_per_address(make_app: Any) -> None:
    app = await make_app(signup_rate_limit="2/hour")
    async with browser(app) as http:
        web = Browser(http)
        await web.sign_up()
        await web.sign_up()
        third = await web.submit(
            "/dashboard/signup", "/dashboard/signup", {"email": "third@example.com", "password": PASSWORD}
        )
        assert third.status_code == 429
    async with app.state.database.read_sessions() as session:
        assert len((await session.scalars(select(Account))).all()) == 2


async def test_only_a_hash_of_the_session_token_is_stored(web: Browser, app: FastAPI) -> None:
    await web.sign_up()
    token = web.http.cookies["vpx_session"]
    async with app.state.database.read_sessions() as session:
        ids = [s.id for s in await session.scalars(select(DashboardSession))]
    assert len(ids) == 1 and token not in ids[0]


async def test_a_suspended_account_cannot_sign_in_and_its_sessions_end(
    web: Browser, other_web: Browser, app: FastAPI
) -> None:
    """The operator's suspension (docs/operations.md): the same words as the API's account_suspended."""
    from vpx.accounts import lifecycle
    from vpx.errors import ACCOUNT_SUSPENDED

    await web.sign_up()
    account_id = await web.account_id()
    assert (await web.get("/dashboard")).status_code == 200
    async with app.state.database.write_sessions() as session, session.begin():
        await lifecycle.suspend(
            session, account_id=account_id, reason="review", actor="cli:test", now=app.state.clock.now()
        )
    signed_out = await web.get("/dashboard")
    assert signed_out.status_code == 303 and signed_out.headers["location"].startswith("/dashboard/login")
    refused = await other_web.sign_in(web.email)
    assert refused.status_code == 403 and ACCOUNT_SUSPENDED in refused.text and "review" not in refused.text
    async with app.state.database.write_sessions() as session, session.begin():
        await lifecycle.resume(session, account_id=account_id, actor="cli:test", now=app.state.clock.now())
    assert (await other_web.sign_in(web.email)).status_code == 303
