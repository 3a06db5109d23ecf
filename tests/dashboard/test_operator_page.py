"""The operator page at /operator: signed in with an admin token (checked by the admin API's own check
and counted against its failed-token budget, or a known browser's own), sessions kept in the database
(signing out or changing the token ends every copy of the cookie, in every process; signing in always
starts a new one), CSRF-checked forms, sources' freshness and the quality figures on one read-only
page."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select, update

from tests import conftest
from tests.dashboard.conftest import Browser, browser
from tests.factories import Factory
from vpx.app import create_app
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.models import Contact, OperatorSession
from vpx.operator_page import sessions
from vpx.sources import service as source_service

pytestmark = pytest.mark.asyncio
ADMIN_TOKEN = "operator-page-token-0123456789"
OTHER_TOKEN = "another-operator-token-0123456789"
TOKEN_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')
# The domain the client's cookie jar files the server's cookies under (a host name without a dot gets
# ".local"): a cookie set for "testserver" would never be sent.
COOKIE_DOMAIN = "testserver.local"


def operator_settings(database_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "admin_token": ADMIN_TOKEN,
        "admin_tokens": f"ci={OTHER_TOKEN}",
        "admin_failure_rate_limit": "3/minute",
        "login_rate_limit": "1000/minute",
        "signup_rate_limit": "1000/minute",
        "mail_to_log": True,
    }
    return conftest.test_settings(database_url, **{**values, **overrides})


@pytest.fixture
def settings(database_url: str) -> Settings:
    return operator_settings(database_url)


@pytest.fixture
async def another_process(database_url: str, clock: FixedClock, app: FastAPI) -> AsyncIterator[Callable[..., FastAPI]]:
    """Another server process on the same database (nothing wiped), with its own memory and rate
    limits, and these settings changed."""
    made: list[FastAPI] = []

    def make(**overrides: Any) -> FastAPI:
        made.append(create_app(operator_settings(database_url, **overrides), clock=clock))
        return made[-1]

    yield make
    for application in made:
        await application.state.database.dispose()


async def opens(app: FastAPI, cookie: str) -> bool:
    """Whether the session cookie ``cookie``, sent from a browser of its own, opens the operator page."""
    async with browser(app, client_ip="198.51.100.9") as http:
        http.cookies.set(sessions.SESSION_COOKIE, cookie, domain=COOKIE_DOMAIN, path="/operator")
        response = await http.get("/operator")
    assert response.status_code in (200, 303), response.text
    return response.status_code == 200


async def session_rows(app: FastAPI) -> int:
    async with app.state.database.read_sessions() as session:
        return int(await session.scalar(select(func.count()).select_from(OperatorSession)) or 0)


async def sign_in(web: Browser, token: str) -> httpx.Response:
    return await web.submit("/operator/sign-in", "/operator/sign-in", {"token": token})


def cookie_headers(response: httpx.Response) -> list[str]:
    return response.headers.get_list("set-cookie")


async def add_source(app: FastAPI, clock: FixedClock, name: str, every: str) -> None:
    new = source_service.check_new(
        name=name, kind="nucc", url="https://data.example/nucc.csv", every=every,
        mapping=None, mapping_name=None, options={},
    )  # fmt: skip
    async with app.state.database.write_sessions() as session, session.begin():
        await source_service.add_source(session, new, box=app.state.secrets, now=clock.now())


async def test_the_right_token_opens_the_page_with_sources_and_quality(
    app: FastAPI, web: Browser, factory: Factory, clock: FixedClock
) -> None:
    await add_source(app, clock, "nucc-taxonomy", "1d")
    ids = await factory.contacts(
        [{"business_name": f"Quality Co {i}", "city": "Denver", "state": "CO", "industry": "home-services",
          "email": f"owner@quality{i}.example"} for i in range(4)]
    )  # fmt: skip
    async with app.state.database.write_sessions() as session, session.begin():
        await session.execute(
            update(Contact).where(Contact.id == int(ids[0].removeprefix("ct_"))).values(email_status="bounced")
        )
    clock.set(clock.now() + timedelta(days=3))  # twice the interval gone without a success: stale

    signed_in = await sign_in(web, ADMIN_TOKEN)
    assert signed_in.status_code == 303 and signed_in.headers["location"] == "/operator"
    cookie = next(c for c in cookie_headers(signed_in) if c.startswith(f"{sessions.SESSION_COOKIE}="))
    lowered = cookie.lower()
    assert "httponly" in lowered and "samesite=strict" in lowered and "path=/operator" in lowered
    assert "secure" in lowered  # as the dashboard's, unless plain HTTP is asked for
    assert ADMIN_TOKEN not in cookie

    page = await web.get("/operator")
    assert page.status_code == 200, page.text
    assert page.headers["content-security-policy"].startswith("default-src 'self'")
    assert page.headers["cache-control"] == "no-store"
    row = re.search(r'<tr data-source="nucc-taxonomy">(.*?)</tr>', page.text, re.S)
    assert row is not None
    assert "nucc" in row.group(1) and "active" in row.group(1) and "stale" in row.group(1) and "never" in row.group(1)
    assert "Data quality" in page.text
    assert "25.0%" in page.text and "1 of 4 emails bounced" in page.text
    assert re.search(r"<td>bounced</td><td class=\"num\">1</td><td class=\"num\">25.0%</td>", page.text)
    assert "No refunds yet." in page.text and "Opened" in page.text
    assert "Operator <strong>admin</strong>" in page.text
    # The compliance panel: DROP not configured here, no batch, no request, no DNC data.
    assert 'data-testid="compliance"' in page.text and "not configured (VPX_DROP_URL)" in page.text
    assert "0 open, 0 overdue" in page.text and "none imported" in page.text
    assert ADMIN_TOKEN not in page.text
    assert all(ADMIN_TOKEN not in value for value in web.http.cookies.values())


async def test_a_wrong_token_is_refused_and_spends_the_admin_budget(app: FastAPI, web: Browser) -> None:
    for _ in range(2):
        refused = await sign_in(web, "not-the-token-0123456789")
        assert refused.status_code == 403
        assert "not an admin token" in refused.text
        assert sessions.SESSION_COOKIE not in web.http.cookies
    assert (await web.get("/operator")).status_code == 303
    # The third failure from this address uses up the admin API's own budget (3/minute): from then on
    # the right token is refused too, on the page and on the admin API alike.
    assert (await sign_in(web, "")).status_code == 403
    limited = await sign_in(web, ADMIN_TOKEN)
    assert limited.status_code == 429 and "Retry-After" in limited.headers
    assert sessions.SESSION_COOKIE not in web.http.cookies
    api = await web.http.get("/api/v1/admin/quality", headers={"X-Admin-Token": ADMIN_TOKEN})
    assert api.status_code == 429


async def test_without_a_session_the_page_sends_to_sign_in(web: Browser) -> None:
    response = await web.get("/operator")
    assert response.status_code == 303 and response.headers["location"] == "/operator/sign-in"
    assert (await web.http.post("/operator/sign-out", data={"csrf_token": "x"})).status_code == 303
    form = await web.get("/operator/sign-in")
    assert form.status_code == 200 and 'name="token"' in form.text


async def test_a_forged_or_foreign_cookie_opens_nothing(app: FastAPI, web: Browser) -> None:
    web.http.cookies.set(sessions.SESSION_COOKIE, "gAAAAAnot-a-sealed-value", domain=COOKIE_DOMAIN, path="/operator")
    assert (await web.get("/operator")).status_code == 303
    # A value sealed with the service's own keys but not a session (another secret it seals) opens nothing.
    web.http.cookies.set(
        sessions.SESSION_COOKIE, app.state.secrets.seal('{"name": "admin"}'), domain=COOKIE_DOMAIN, path="/operator"
    )
    assert (await web.get("/operator")).status_code == 303


async def test_a_customers_dashboard_session_does_not_open_the_operator_page(web: Browser) -> None:
    await web.sign_up()
    assert (await web.get("/dashboard")).status_code == 200
    response = await web.get("/operator")
    assert response.status_code == 303 and response.headers["location"] == "/operator/sign-in"


async def test_sign_out_ends_the_session_and_needs_the_form_token(web: Browser) -> None:
    assert (await sign_in(web, OTHER_TOKEN)).status_code == 303
    page = await web.get("/operator")
    assert page.status_code == 200 and "Operator <strong>ci</strong>" in page.text
    # Without the page's token, or from another site, the sign-out form is refused.
    assert (await web.http.post("/operator/sign-out", data={"csrf_token": "wrong"})).status_code == 403
    token = TOKEN_FIELD.search(page.text)
    assert token is not None
    cross = await web.http.post(
        "/operator/sign-out", data={"csrf_token": token.group(1)}, headers={"Sec-Fetch-Site": "cross-site"}
    )
    assert cross.status_code == 403
    assert (await web.get("/operator")).status_code == 200
    out = await web.http.post("/operator/sign-out", data={"csrf_token": token.group(1)})
    assert out.status_code == 303 and out.headers["location"] == "/operator/sign-in"
    assert (await web.get("/operator")).status_code == 303


async def test_sign_in_without_the_forms_cookie_token_is_refused(web: Browser) -> None:
    await web.get("/operator/sign-in")
    response = await web.http.post("/operator/sign-in", data={"csrf_token": "forged", "token": ADMIN_TOKEN})
    assert response.status_code == 403
    assert sessions.SESSION_COOKIE not in web.http.cookies


async def test_a_session_expires_and_ends_when_its_token_changes(
    web: Browser, clock: FixedClock, another_process: Callable[..., FastAPI]
) -> None:
    assert (await sign_in(web, ADMIN_TOKEN)).status_code == 303
    clock.set(clock.now() + timedelta(hours=sessions.SESSION_HOURS, seconds=1))
    # The browser would have dropped the cookie; one kept past its age opens nothing either.
    assert (await web.get("/operator")).status_code == 303

    assert (await sign_in(web, ADMIN_TOKEN)).status_code == 303
    cookie = web.http.cookies[sessions.SESSION_COOKIE]
    # Another process with the same settings opens it (the session is in the database)...
    assert await opens(another_process(), cookie)
    # ...one where the token has another value does not, nor does one where the token is gone.
    assert not await opens(another_process(admin_token="a-new-operator-token-0123456789"), cookie)
    assert not await opens(another_process(admin_token=None), cookie)
    # A token renamed but kept (the session was made with the one named "admin") opens nothing either.
    assert not await opens(another_process(admin_token=None, admin_tokens=f"ops={ADMIN_TOKEN}"), cookie)
    # Rotating the secret keys ends every session too.
    # A new first key (a test value), the old one kept for opening.
    rotated = another_process(secret_keys=f"C683w59_ryqzw-LQSpH-UvonPiJRuGPkQfj1iQoxhXE=,{conftest.TEST_SECRET_KEY}")
    assert not await opens(rotated, cookie)
    assert (await web.get("/operator")).status_code == 200


async def test_a_cookie_replayed_after_sign_out_opens_nothing_in_any_process(
    app: FastAPI, web: Browser, another_process: Callable[..., FastAPI]
) -> None:
    assert (await sign_in(web, ADMIN_TOKEN)).status_code == 303
    copy = web.http.cookies[sessions.SESSION_COOKIE]
    elsewhere = another_process()
    assert await opens(app, copy) and await opens(elsewhere, copy)
    page = await web.get("/operator")
    token = TOKEN_FIELD.search(page.text)
    assert token is not None
    out = await web.http.post("/operator/sign-out", data={"csrf_token": token.group(1)})
    assert out.status_code == 303
    assert sessions.SESSION_COOKIE not in web.http.cookies
    # The copy, replayed from another browser, to this process or another one, opens nothing.
    assert not await opens(app, copy)
    assert not await opens(elsewhere, copy)
    assert await session_rows(app) == 0


async def test_sign_in_starts_a_new_session_and_ends_a_planted_one(app: FastAPI, web: Browser) -> None:
    """Login CSRF: a session cookie planted in the browser before sign-in never becomes its session."""
    async with browser(app) as other:
        attacker = Browser(other)
        assert (await sign_in(attacker, OTHER_TOKEN)).status_code == 303
        planted = other.cookies[sessions.SESSION_COOKIE]
    web.http.cookies.set(sessions.SESSION_COOKIE, planted, domain=COOKIE_DOMAIN, path="/operator")
    # The sign-in form is shown even so, saying which session the browser holds.
    form = await web.get("/operator/sign-in")
    assert form.status_code == 200 and 'name="token"' in form.text
    assert "signed in as <strong>ci</strong>" in form.text

    signed_in = await sign_in(web, ADMIN_TOKEN)
    assert signed_in.status_code == 303
    mine = web.http.cookies[sessions.SESSION_COOKIE]
    assert mine != planted
    page = await web.get("/operator")
    assert page.status_code == 200 and "Operator <strong>admin</strong>" in page.text
    # The planted session ended with the sign-in: no one holding it acts in this browser's name.
    assert not await opens(app, planted)
    assert await session_rows(app) == 1

    # Any value planted (one never issued) is replaced the same way.
    web.http.cookies.set(sessions.SESSION_COOKIE, "planted-value", domain=COOKIE_DOMAIN, path="/operator")
    assert (await sign_in(web, ADMIN_TOKEN)).status_code == 303
    assert web.http.cookies[sessions.SESSION_COOKIE] not in ("planted-value", mine)


async def test_signing_in_again_ends_the_earlier_session_and_clears_expired_ones(
    app: FastAPI, web: Browser, other_web: Browser, clock: FixedClock
) -> None:
    assert (await sign_in(other_web, OTHER_TOKEN)).status_code == 303
    assert (await sign_in(web, ADMIN_TOKEN)).status_code == 303
    first = web.http.cookies[sessions.SESSION_COOKIE]
    assert (await sign_in(web, OTHER_TOKEN)).status_code == 303
    assert not await opens(app, first)
    assert await session_rows(app) == 2
    clock.set(clock.now() + timedelta(hours=sessions.SESSION_HOURS, seconds=1))
    assert (await sign_in(web, ADMIN_TOKEN)).status_code == 303
    assert await session_rows(app) == 1  # the two expired rows went with this sign-in


async def spend_the_address_budget(app: FastAPI) -> None:
    """Someone else at the operator's address (an office's NAT) sends wrong tokens until refused."""
    async with browser(app) as http:
        stranger = Browser(http)
        for _ in range(3):
            assert (await sign_in(stranger, "a-wrong-guess-0123456789")).status_code == 403
        assert (await sign_in(stranger, ADMIN_TOKEN)).status_code == 429


async def test_wrong_tokens_from_the_operators_address_cannot_lock_out_a_browser_that_signed_in(
    app: FastAPI, web: Browser, other_web: Browser
) -> None:
    assert (await sign_in(web, ADMIN_TOKEN)).status_code == 303
    page = await web.get("/operator")
    token = TOKEN_FIELD.search(page.text)
    assert token is not None
    assert (await web.http.post("/operator/sign-out", data={"csrf_token": token.group(1)})).status_code == 303

    await spend_the_address_budget(app)
    # The address is refused, the right token included, on the page and on the admin API...
    assert (await sign_in(other_web, ADMIN_TOKEN)).status_code == 429
    api = await web.http.get("/api/v1/admin/quality", headers={"X-Admin-Token": ADMIN_TOKEN})
    assert api.status_code == 429
    # ...but the browser that signed in before signs in with its own budget.
    again = await sign_in(web, ADMIN_TOKEN)
    assert again.status_code == 303 and (await web.get("/operator")).status_code == 200


async def test_known_browsers_of_a_token_share_a_budget_apart_from_the_address(
    app: FastAPI, web: Browser, other_web: Browser
) -> None:
    assert (await sign_in(web, OTHER_TOKEN)).status_code == 303
    assert (await sign_in(other_web, ADMIN_TOKEN)).status_code == 303
    async with browser(app) as http:
        second = Browser(http)
        assert (await sign_in(second, OTHER_TOKEN)).status_code == 303
        for _ in range(3):
            assert (await sign_in(web, "a-typo-in-the-token-0123")).status_code == 403
        limited = await sign_in(web, OTHER_TOKEN)
        assert limited.status_code == 429 and "Retry-After" in limited.headers
        assert "from this browser" in limited.text
        # The browsers known to the same token share that budget (one budget per token, not per mark)...
        assert (await sign_in(second, OTHER_TOKEN)).status_code == 429
    # ...a browser known to another token does not, and the failures did not spend the address's
    # budget: a browser there that never signed in signs in.
    assert (await sign_in(other_web, ADMIN_TOKEN)).status_code == 303
    async with browser(app) as http:
        assert (await sign_in(Browser(http), ADMIN_TOKEN)).status_code == 303


async def test_a_forged_or_outdated_browser_mark_spends_the_address_budget(
    app: FastAPI, web: Browser, another_process: Callable[..., FastAPI]
) -> None:
    signed_in = await sign_in(web, ADMIN_TOKEN)
    assert signed_in.status_code == 303
    set_mark = next(c for c in cookie_headers(signed_in) if c.startswith(f"{sessions.KNOWN_BROWSER_COOKIE}="))
    lowered = set_mark.lower()
    assert "httponly" in lowered and "samesite=strict" in lowered and "path=/operator" in lowered
    assert "secure" in lowered and ADMIN_TOKEN not in set_mark
    mark = web.http.cookies[sessions.KNOWN_BROWSER_COOKIE]
    # The mark opens nothing by itself.
    async with browser(app) as http:
        http.cookies.set(sessions.KNOWN_BROWSER_COOKIE, mark, domain=COOKIE_DOMAIN, path="/operator")
        assert (await http.get("/operator")).status_code == 303
    forged = app.state.secrets.seal('{"token_hash": "0", "expires": 9e12}')
    # After the token changes, the mark made with its old value is no one's.
    changed = another_process(admin_token="a-new-operator-token-0123456789")
    await spend_the_address_budget(changed)
    for value in (mark, forged, "not-sealed"):
        async with browser(changed) as http:
            http.cookies.set(sessions.KNOWN_BROWSER_COOKIE, value, domain=COOKIE_DOMAIN, path="/operator")
            refused = await sign_in(Browser(http), "a-new-operator-token-0123456789")
        assert refused.status_code == 429, value
    # A mark lasts KNOWN_BROWSER_DAYS: past it, the browser is a stranger again.
    await spend_the_address_budget(app)
    app.state.clock.set(app.state.clock.now() + timedelta(days=sessions.KNOWN_BROWSER_DAYS, seconds=1))
    assert (await sign_in(web, ADMIN_TOKEN)).status_code == 429


async def test_plain_http_setting_drops_only_secure(make_app: Callable[..., Awaitable[FastAPI]]) -> None:
    app = await make_app(admin_token=ADMIN_TOKEN, dashboard_plain_http=True)
    async with browser(app) as http:
        signed_in = await sign_in(Browser(http), ADMIN_TOKEN)
    assert signed_in.status_code == 303
    cookies = [c.lower() for c in cookie_headers(signed_in) if c.startswith(sessions.SESSION_COOKIE)]
    assert cookies and all("secure" not in c and "httponly" in c and "samesite=strict" in c for c in cookies)


async def test_with_no_admin_token_operator_access_is_off(make_app: Callable[..., Awaitable[FastAPI]]) -> None:
    app = await make_app()
    async with browser(app) as http:
        for path in ("/operator", "/operator/sign-in"):
            response = await http.get(path)
            assert response.status_code == 404 and "Operator access is off" in response.text
        posted = await http.post("/operator/sign-in", data={"token": "anything-at-all-0123456789"})
        assert posted.status_code == 404


async def test_the_pages_stay_out_of_the_api_document(app: FastAPI) -> None:
    assert not [path for path in app.openapi()["paths"] if path.startswith("/operator")]
