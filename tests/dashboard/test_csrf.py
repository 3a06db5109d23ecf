"""CSRF protection on every dashboard form: a POST without this session's token (or the sign-in
form's cookie token), with a wrong one, or from another site is refused with 403 and changes nothing."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.conftest import TEST_SECRET_KEY
from tests.dashboard.conftest import PASSWORD, Browser, secret_of
from tests.factories import Factory
from vpx.models import (
    Account,
    ApiKey,
    AutoBuyRule,
    DashboardSession,
    LedgerEntry,
    Reveal,
    WebhookDelivery,
    WebhookEndpoint,
)

SIGNED_IN_FORMS = {
    "/dashboard/logout": {},
    "/dashboard/keys": {"type": "full", "name": "forged", "ip_allowlist": ""},
    "/dashboard/keys/{key_id}": {"name": "forged", "ip_allowlist": "203.0.113.9"},
    "/dashboard/keys/{key_id}/revoke": {},
    "/dashboard/contacts/{contact_id}/reveal": {"expected_price": "1"},
    "/dashboard/webhooks": {"url": "https://forged.example.com/hook", "events": "contact.revealed"},
    "/dashboard/webhooks/{webhook_id}/test": {},
    "/dashboard/webhooks/{webhook_id}/delete": {},
    "/dashboard/rules": {"industries": "dental", "states": "CO", "min_confidence": "0.5"},
    "/dashboard/rules/{rule_id}/{action}": {},
}
ANONYMOUS_FORMS = {
    "/dashboard/signup": {"email": "forged@example.com", "password": PASSWORD},
    "/dashboard/login": {"email": "forged@example.com", "password": PASSWORD},
    "/dashboard/forgot": {"email": "forged@example.com"},
    "/dashboard/reset": {"token": "t" * 43, "password": PASSWORD},
    "/dashboard/confirm": {"token": "t" * 43, "password": PASSWORD},
}
# The page a form is on, where it is not the form's own address (the new-password and confirmation
# forms need a link's token).
FORM_PAGES = {"/dashboard/reset": "/dashboard/forgot", "/dashboard/confirm": "/dashboard/forgot"}


def post_routes(routes: Iterable[Any], prefix: str = "") -> Iterator[str]:
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            context = getattr(route, "include_context", None)
            yield from post_routes(inner.routes, prefix + str(getattr(context, "prefix", "") or ""))
        elif "POST" in (getattr(route, "methods", None) or ()):
            yield prefix + route.path


def test_every_dashboard_form_is_covered_here() -> None:
    from vpx.app import create_app
    from vpx.config import Settings

    app = create_app(Settings(database_url="sqlite+aiosqlite:///:memory:", secret_keys=TEST_SECRET_KEY))
    forms = {path for path in post_routes(app.routes) if path.startswith("/dashboard")}
    assert forms == set(SIGNED_IN_FORMS) | set(ANONYMOUS_FORMS)


async def snapshot(app: FastAPI) -> dict[str, Any]:
    async with app.state.database.read_sessions() as session:
        keys = [(k.id, k.name, k.revoked_at, tuple(k.ip_allowlist)) for k in await session.scalars(select(ApiKey))]
        return {
            "webhooks": await session.scalar(select(func.count()).select_from(WebhookEndpoint)),
            "deliveries": await session.scalar(select(func.count()).select_from(WebhookDelivery)),
            "accounts": await session.scalar(select(func.count()).select_from(Account)),
            "keys": sorted(keys),
            "sessions": await session.scalar(select(func.count()).select_from(DashboardSession)),
            "reveals": await session.scalar(select(func.count()).select_from(Reveal)),
            "ledger": await session.scalar(select(func.count()).select_from(LedgerEntry)),
            "rules": sorted((r.id, r.status) for r in await session.scalars(select(AutoBuyRule))),
        }


@pytest.fixture
async def signed_in(web: Browser, factory: Factory, app: FastAPI) -> dict[str, str]:
    async def public_dns(host: str, port: int) -> list[str]:
        return ["93.184.216.34"]

    app.state.webhook_resolver = public_dns
    await web.sign_up()
    key_page = await web.create_key("live", name="existing")
    key_id = key_page.text.split("<code>key_", 1)[1].split("</code>", 1)[0]
    token = await web.token("/dashboard/webhooks")
    hook = await web.http.post(
        "/dashboard/webhooks",
        data={"csrf_token": token, "url": "https://hooks.example.com/a", "events": "contact.revealed"},
    )
    webhook_id = hook.text.split("<code>wh_", 1)[1].split("</code>", 1)[0]
    rule = await web.http.post(
        "/dashboard/rules",
        data={"csrf_token": token, "industries": "dental", "states": "CO", "min_confidence": "0.5"},
    )
    rule_id = rule.text.split('data-rule-id="', 1)[1].split('"', 1)[0]
    return {
        "rule_id": rule_id,
        "action": "pause",
        "key_id": "key_" + key_id,
        "contact_id": await factory.contact(),
        "secret": secret_of(key_page.text),
        "webhook_id": "wh_" + webhook_id,
    }


@pytest.mark.parametrize("path", sorted(SIGNED_IN_FORMS))
@pytest.mark.parametrize("token", ["missing", "wrong", "cross-site"])
async def test_signed_in_forms_refuse_a_forged_post(
    web: Browser, app: FastAPI, signed_in: dict[str, str], path: str, token: str
) -> None:
    before = await snapshot(app)
    data = dict(SIGNED_IN_FORMS[path])
    headers = {}
    if token == "wrong":
        data["csrf_token"] = "x" * 43
    elif token == "cross-site":
        data["csrf_token"] = await web.token("/dashboard/keys")
        headers["Sec-Fetch-Site"] = "cross-site"
    response = await web.http.post(path.format(**signed_in), data=data, headers=headers)
    assert response.status_code == 403, response.text
    assert "Form refused" in response.text
    assert await snapshot(app) == before
    assert (await web.get("/dashboard/keys")).status_code == 200  # still signed in


async def test_the_same_forms_with_their_token_work(web: Browser, signed_in: dict[str, str]) -> None:
    contact = signed_in["contact_id"]
    reveal = await web.submit(
        f"/dashboard/contacts/{contact}", f"/dashboard/contacts/{contact}/reveal", {"expected_price": "1"}
    )
    assert reveal.status_code == 303
    headers = {"Sec-Fetch-Site": "same-origin"}
    token = await web.token("/dashboard/keys")
    revoked = await web.http.post(
        f"/dashboard/keys/{signed_in['key_id']}/revoke", data={"csrf_token": token}, headers=headers
    )
    assert revoked.status_code == 303


async def test_a_token_of_another_session_is_refused(
    web: Browser, other_web: Browser, app: FastAPI, signed_in: dict[str, str]
) -> None:
    await other_web.sign_up()
    their_token = await other_web.token("/dashboard/keys")
    before = await snapshot(app)
    response = await web.http.post(f"/dashboard/keys/{signed_in['key_id']}/revoke", data={"csrf_token": their_token})
    assert response.status_code == 403
    assert await snapshot(app) == before


@pytest.mark.parametrize("path", sorted(ANONYMOUS_FORMS))
@pytest.mark.parametrize("token", ["missing", "no-cookie", "mismatch", "cross-site"])
async def test_sign_in_and_sign_up_refuse_a_forged_post(
    web: Browser, app: FastAPI, factory: Factory, path: str, token: str
) -> None:
    await factory.account(email="forged@example.com")
    before = await snapshot(app)
    data = dict(ANONYMOUS_FORMS[path])
    headers = {}
    if token == "no-cookie":
        data["csrf_token"] = "a" * 43
    elif token == "mismatch":
        await web.get(FORM_PAGES.get(path, path))  # the browser now holds a cookie token
        data["csrf_token"] = "b" * 43
    elif token == "cross-site":
        data["csrf_token"] = await web.token(FORM_PAGES.get(path, path))
        headers["Sec-Fetch-Site"] = "cross-site"
    response = await web.http.post(path, data=data, headers=headers)
    assert response.status_code == 403, response.text
    assert "vpx_session" not in response.headers.get("set-cookie", "")
    assert await snapshot(app) == before
