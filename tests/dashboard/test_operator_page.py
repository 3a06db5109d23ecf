"""The operator page at /operator: signed in with an admin token (checked by the admin API's own check
and counted against its failed-token budget), a sealed session cookie that never holds the token,
CSRF-checked forms, sources' freshness and the quality figures on one read-only page."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import update

from tests import conftest
from tests.dashboard.conftest import Browser, browser
from tests.factories import Factory
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.models import Contact
from vpx.operator_page import sessions
from vpx.sources import service as source_service

pytestmark = pytest.mark.asyncio
ADMIN_TOKEN = "operator-page-token-0123456789"
OTHER_TOKEN = "another-operator-token-0123456789"
TOKEN_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
def settings(database_url: str) -> Settings:
    return conftest.test_settings(
        database_url,
        admin_token=ADMIN_TOKEN,
        admin_tokens=f"ci={OTHER_TOKEN}",
        admin_failure_rate_limit="3/minute",
        login_rate_limit="1000/minute",
        signup_rate_limit="1000/minute",
        mail_to_log=True,
    )


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
    web.http.cookies.set(sessions.SESSION_COOKIE, "gAAAAAnot-a-sealed-value", domain="testserver", path="/operator")
    assert (await web.get("/operator")).status_code == 303
    # A value sealed with the service's own keys but not a session (another secret it seals) opens nothing.
    web.http.cookies.set(
        sessions.SESSION_COOKIE, app.state.secrets.seal('{"name": "admin"}'), domain="testserver", path="/operator"
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
    web: Browser, clock: FixedClock, make_app: Callable[..., Awaitable[FastAPI]]
) -> None:
    assert (await sign_in(web, ADMIN_TOKEN)).status_code == 303
    clock.set(clock.now() + timedelta(hours=sessions.SESSION_HOURS, seconds=1))
    # The browser would have dropped the cookie; one kept past its age opens nothing either.
    assert (await web.get("/operator")).status_code == 303

    assert (await sign_in(web, ADMIN_TOKEN)).status_code == 303
    sealed = web.http.cookies[sessions.SESSION_COOKIE]
    rotated = await make_app(admin_token="a-new-operator-token-0123456789")
    async with browser(rotated) as http:
        http.cookies.set(sessions.SESSION_COOKIE, sealed, domain="testserver", path="/operator")
        assert (await http.get("/operator")).status_code == 303


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
