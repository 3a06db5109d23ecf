"""What an outside security probe asked of the API, on both databases: free text refuses control
characters (one rule, one type: vpx.fields), a query string that is not UTF-8 is a 400, a hostile body
on a public route is a 4xx with no traceback logged, HSTS when the public address is https, and D26's
guard treats IPv6 loopback as loopback."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests import factories
from tests.conftest import asgi_client, test_settings
from tests.factories import Factory
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliver_round
from vpx.app import create_app
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.fields import MULTI_LINE_MESSAGE, MULTI_LINE_PATTERN, SINGLE_LINE_MESSAGE, SINGLE_LINE_PATTERN
from vpx.signals.evidence import event_from

pytestmark = pytest.mark.asyncio

ADMIN_TOKEN = "hardening-admin-token-0123456789"


@pytest.fixture
def settings(database_url: str) -> Settings:
    return test_settings(
        database_url,
        webhook_allow_private=True,
        mailbox_allow_private=True,
        worker_in_process=False,
        admin_token=ADMIN_TOKEN,
        # Sign-up and password reset answer their forms only where mail can go out; none is sent here.
        smtp_url="smtp://127.0.0.1:1",
    )


def assert_refused(response: httpx.Response, field: str, message: str = SINGLE_LINE_MESSAGE) -> None:
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["code"] == "invalid_parameters"
    assert {"field": field, "message": message} in problem["errors"], problem["errors"]


async def _mailbox(client: httpx.AsyncClient, account: factories.TestAccount, **fields: Any) -> httpx.Response:
    body = {
        "email": "sam@seller.example",
        "smtp_host": "127.0.0.1",
        "smtp_port": 2525,
        "smtp_security": "none",
        "postal_address": "Seller Inc\n1 Main St\nDenver CO 80202",
        **fields,
    }
    return await client.post("/api/v1/mailboxes", json=body, headers=account.headers("full"))


# --- Free text: control characters refused, newline and tab kept where text has lines ---

RULE = {"industries": ["saas"], "states": ["CO"], "min_confidence": 0.5}
BAD_TEXT = ["a\u0000b", "a\u0001b", "\u001b[31mred", "a\u007fb", "two\nlines", "tab\there", "trailing\r\n"]


@pytest.mark.parametrize("text", BAD_TEXT)
async def test_a_webhook_description_with_a_control_character_is_422_on_both_databases(
    client: httpx.AsyncClient, factory: Factory, text: str
) -> None:
    """On PostgreSQL a NUL used to reach the text column; now the schema refuses it, naming the field."""
    account = await factory.account()
    hook = {"url": "https://127.0.0.1/hook", "events": ["signal.created"]}
    created = await client.post("/api/v1/webhooks", json={**hook, "description": text}, headers=account.headers("full"))
    assert_refused(created, "description")
    good = await client.post("/api/v1/webhooks", json={**hook, "description": "CRM"}, headers=account.headers("full"))
    assert good.status_code == 201, good.text
    path = f"/api/v1/webhooks/{good.json()['id']}"
    assert_refused(await client.patch(path, json={"description": text}, headers=account.headers("full")), "description")
    assert (await client.get(path, headers=account.headers("full"))).json()["description"] == "CRM"


async def test_every_free_text_field_refuses_nul(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    full = account.headers("full")
    nul = "x\u0000y"
    cases: list[tuple[str, str, dict[str, Any], str]] = [
        ("POST", "/api/v1/keys", {"type": "live", "name": nul}, "name"),
        ("POST", "/api/v1/buyer/auto-buy/rules", {**RULE, "name": nul}, "name"),
        ("PATCH", "/api/v1/buyer/auto-buy/rules/abr_x", {"name": nul}, "name"),
        ("POST", "/api/v1/contacts/search", {"query": nul}, "query"),
        ("POST", "/api/v1/contacts/search", {"q": "plumber", "city": nul}, "city"),
        ("POST", "/api/v1/contacts/search", {"specialty": nul}, "specialty"),
        ("POST", "/api/v1/contacts/search", {"license_type": nul}, "license_type"),
        ("POST", "/api/v1/visitors/sites", {"domain": "acme.example", "name": nul}, "name"),
        ("POST", "/api/v1/visitors/sites", {"domain": "acme.example", "topic": nul}, "topic"),
        (
            "POST",
            "/api/v1/visitors/identify",
            {"site_id": "site_x", "ip": "203.0.113.7", "url": "https://acme.example/", "user_agent": nul},
            "user_agent",
        ),
        ("PATCH", "/api/v1/mailboxes/mbx_x", {"from_name": nul}, "from_name"),
        ("PATCH", "/api/v1/mailboxes/mbx_x", {"smtp_password": nul}, "smtp_password"),
        ("PATCH", "/api/v1/sequences/seq_x", {"name": nul}, "name"),
        (
            "POST",
            "/api/v1/sequences",
            {"name": "Intro", "mailbox_id": "mbx_x", "steps": [{"type": "email", "subject": nul, "body": "Hi"}]},
            "steps[0].email.subject",
        ),
    ]
    for method, path, body, field in cases:
        response = await client.request(method, path, json=body, headers=full)
        assert_refused(response, field)
    key = (await client.get("/api/v1/keys", headers=full)).json()["keys"][0]["id"]
    assert_refused(await client.patch(f"/api/v1/keys/{key}", json={"name": nul}, headers=full), "name")


async def test_multi_line_text_keeps_newline_and_tab_and_refuses_other_controls(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    full = account.headers("full")
    assert_refused(
        await _mailbox(client, account, postal_address="1 Main St\u0000Denver"), "postal_address", MULTI_LINE_MESSAGE
    )
    assert_refused(await _mailbox(client, account, from_name="Sam\nSeller"), "from_name")
    created = await _mailbox(client, account, from_name="Sam Seller")
    assert created.status_code == 201, created.text
    assert created.json()["postal_address"] == "Seller Inc\n1 Main St\nDenver CO 80202"
    mailbox_id = created.json()["id"]

    def sequence(body: str, note: str = "Call them") -> dict[str, Any]:
        steps = [{"type": "email", "subject": "Hello", "body": body}, {"type": "task", "note": note}]
        return {"name": "Intro", "mailbox_id": mailbox_id, "steps": steps}

    for field, body in (
        ("steps[0].email.body", sequence("Hi\u0000there")),
        ("steps[0].email.body", sequence("Hi\rthere")),
        ("steps[1].task.note", sequence("Hi", note="call\u0007")),
    ):
        assert_refused(await client.post("/api/v1/sequences", json=body, headers=full), field, MULTI_LINE_MESSAGE)
    kept = await client.post(
        "/api/v1/sequences",
        json=sequence("Hi {{ contact.business_name }},\n\n\tsee you.", "line one\nline two"),
        headers=full,
    )
    assert kept.status_code == 201, kept.text


async def test_a_control_character_in_a_query_parameter_is_422(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    headers = account.headers("full")
    for query, field in (
        ("q=a%00b", "q"),
        ("q=a%01b", "q"),
        ("q=plumber&city=Den%1Bver", "city"),
        ("specialty=a%7Fb", "specialty"),
        ("license_type=%00", "license_type"),
    ):
        assert_refused(await client.get(f"/api/v1/contacts/search?{query}", headers=headers), field)
    assert_refused(await client.get("/api/v1/exports/contacts.csv?q=a%00b", headers=headers), "q")
    assert_refused(await client.get("/v/vpxs_unknown/pixel.gif?url=https://a.example/%00"), "url")
    # Spaces around the words are trimmed as before; the words themselves are searched.
    fine = await client.get("/api/v1/contacts/search?q=%20plumber%20&city=Denver", headers=headers)
    assert fine.status_code == 200, fine.text


async def test_a_page_view_title_with_a_control_character_is_422(client: httpx.AsyncClient) -> None:
    view = {"site_key": "vpxs_unknown", "url": "https://acme.example/", "title": "Acme\u0000"}
    assert_refused(await client.post("/v/collect", json=view), "title")


async def test_a_contributed_row_with_a_control_character_is_rejected_on_its_own(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    row = {"business_name": "Nul Bakery", "phone": "+13035550177", "city": "Denver", "state": "CO"}
    rows = [
        {**row, "business_name": "Nul\u0000 Bakery", "industry": "restaurants"},
        {**row, "street": "1 Main St\nSuite 2", "industry": "restaurants", "phone": "+13035550178"},
        {**row, "industry": "restaurants", "phone": "+13035550179"},
    ]
    response = await client.post(
        "/api/v1/contacts/contribute", json={"contacts": rows}, headers=account.headers("live")
    )
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == ["rejected", "rejected", "accepted"]
    assert results[0]["errors"] == [{"field": "contacts[0].business_name", "message": SINGLE_LINE_MESSAGE}]
    assert results[1]["errors"] == [{"field": "contacts[1].street", "message": SINGLE_LINE_MESSAGE}]


async def test_an_evidence_event_with_a_control_character_is_skipped(app: FastAPI) -> None:
    event = {
        "category": "switching_intent",
        "industry": "saas",
        "observed_at": "2026-11-14T09:30:00Z",
        "topic": "help\u0000desk",
        "business": {"name": "Northwind", "city": "Seattle", "state": "WA"},
        "evidence": {"vendor_named": "Zendesk"},
    }
    with pytest.raises(ValueError, match="topic"):
        event_from(event)
    async with asgi_client(app) as http:
        response = await http.post("/api/v1/admin/signals", json=[event], headers={"X-Admin-Token": ADMIN_TOKEN})
    assert response.status_code == 200, response.text
    assert [(s["index"], s["reason"]) for s in response.json()["skipped"]] == [(0, "invalid_event")]


async def test_lengths_of_optional_text_are_worded_as_for_any_string(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    response = await client.patch(
        "/api/v1/webhooks/wh_x", json={"description": "d" * 201}, headers=account.headers("full")
    )
    assert_refused(response, "description", "must be at most 200 characters")


async def test_the_document_states_the_rule(app: FastAPI) -> None:
    schemas = app.openapi()["components"]["schemas"]
    assert schemas["WebhookCreate"]["properties"]["description"]["pattern"] == SINGLE_LINE_PATTERN
    [text, _] = schemas["WebhookUpdate"]["properties"]["description"]["anyOf"]
    assert (text["pattern"], text["maxLength"]) == (SINGLE_LINE_PATTERN, 200)
    assert schemas["EmailStep"]["properties"]["body"]["pattern"] == MULTI_LINE_PATTERN
    assert schemas["EmailStep"]["properties"]["subject"]["pattern"] == SINGLE_LINE_PATTERN


# --- A query string that is not UTF-8 is malformed ---


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/contacts/search?q=%ff%fe",
        "/api/v1/contacts/search?q=plumber&city=%c3%28",
        "/api/v1/signals?cursor=%80",
        "/api/v1/exports/contacts.csv?q=caf%e9",
        "/api/v1/account?%ff=1",
        "/v/vpxs_unknown/pixel.gif?url=%ff",
        "/u/some-token?x=%fe",
        "/dashboard/login?next=%ff",
        "/api/v1/no-such-route?q=%ff",
    ],
)
async def test_a_query_string_that_is_not_utf8_is_a_400(client: httpx.AsyncClient, factory: Factory, path: str) -> None:
    account = await factory.account()
    for headers in (account.headers("full"), {}):
        response = await client.get(path, headers=headers)
        assert response.status_code == 400, response.text
        assert response.headers["content-type"] == "application/problem+json"
        assert response.headers["X-Request-Id"]
        problem = response.json()
        assert (problem["code"], problem["status"]) == ("malformed_request", 400)


async def test_percent_encoded_utf8_is_searched_as_before(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    response = await client.get("/api/v1/contacts/search?q=caf%C3%A9%20%E2%9C%93", headers=account.headers("full"))
    assert response.status_code == 200, response.text


# --- A hostile body on a public route: a 4xx, and no traceback in the logs ---

DEEP_ARRAY = "[" * 5000 + "]" * 5000
DEEP_OBJECT = '{"":' * 3000 + "1" + "}" * 3000  # under the page view's 16 KB
CSRF = {"cookie": "vpx_csrf=csrf-token-of-the-test"}
FORM = "application/x-www-form-urlencoded"
HOSTILE_BODIES: list[tuple[str, str | bytes]] = [
    ("text/plain;charset=UTF-8", DEEP_ARRAY),
    ("application/json", DEEP_OBJECT),
    ("application/json", b"\xff\xfe{\x00"),
    ("application/json", '{"site_key": "vpxs_\u0000", "url": "http://[::1/"}'),
    ("application/json", "1e999999"),
    ("text/plain", "not json at all"),
    (FORM, "csrf_token=csrf-token-of-the-test&email=" + "%5B" * 5000 + "&password=" + "%ff" * 100),
    (FORM, "csrf_token=csrf-token-of-the-test&" + "&".join(f"f{i}=1" for i in range(3000))),
    ("multipart/form-data; boundary=x", b'--x\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\nbroken'),
    ("multipart/form-data", b"no boundary"),
]
# Every route that takes a body without an API key (the pixel is a GET: its query and Referer are
# swept below).
PUBLIC_BODY_ROUTES = [
    "/v/collect",
    "/u/aaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "/dashboard/login",
    "/dashboard/signup",
    "/dashboard/forgot",
    "/dashboard/reset",
    "/dashboard/confirm",
]


@pytest.fixture
def vpx_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every record of the service's loggers (which do not propagate to the root logger)."""
    logger = logging.getLogger("vpx")
    level = logger.level
    logger.addHandler(caplog.handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield caplog
    finally:
        logger.removeHandler(caplog.handler)
        logger.setLevel(level)


def assert_no_traceback(logs: pytest.LogCaptureFixture) -> None:
    tracebacks = [r.getMessage() for r in logs.records if r.exc_info or "Traceback" in r.getMessage()]
    assert tracebacks == [], tracebacks


async def _site_key(client: httpx.AsyncClient, account: factories.TestAccount) -> str:
    response = await client.post(
        "/api/v1/visitors/sites", json={"domain": "www.seller.example"}, headers=account.headers("full")
    )
    assert response.status_code == 201, response.text
    key: str = response.json()["site_key"]
    return key


async def test_a_hostile_body_on_a_public_route_is_a_4xx_without_a_traceback(
    client: httpx.AsyncClient, factory: Factory, vpx_logs: pytest.LogCaptureFixture
) -> None:
    await _site_key(client, await factory.account())
    refused = []
    for path in PUBLIC_BODY_ROUTES:
        for content_type, body in HOSTILE_BODIES:
            # With the CSRF cookie the forms match, so the dashboard parses the whole form.
            response = await client.post(path, content=body, headers={"content-type": content_type, **CSRF})
            if not 400 <= response.status_code < 500:
                refused.append((path, content_type, str(body)[:40], response.status_code))
    assert refused == []
    assert_no_traceback(vpx_logs)


async def test_a_body_deeper_than_the_parser_goes_is_a_400_malformed_request(client: httpx.AsyncClient) -> None:
    for body in (DEEP_ARRAY, DEEP_OBJECT):
        response = await client.post("/v/collect", content=body, headers={"content-type": "text/plain"})
        assert response.status_code == 400, response.text
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["code"] == "malformed_request"


HOSTILE_QUERIES: list[tuple[str, dict[str, str], dict[str, str]]] = [
    ("/v/{site_key}/pixel.gif", {"url": "http://[::1/"}, {}),
    ("/v/{site_key}/pixel.gif", {"url": "https://a.example:99999/"}, {}),
    ("/v/{site_key}/pixel.gif", {"url": "https://a.example/?q=" + "é" * 2000}, {}),
    ("/v/{site_key}/pixel.gif", {}, {"referer": "https://a.example/\u0000x"}),
    ("/v/{site_key}/pixel.gif", {}, {"referer": "https://a.example/?" + "e=a@b.co&" * 220}),
    ("/v/vpxs_%00/pixel.gif", {}, {}),
    ("/v/vpxs_%00.js", {}, {}),
    ("/u/aaaaaaaaaaaaaaaaaaaaaaaaaaaa", {"x": "[" * 3000}, {}),
    ("/dashboard/login", {"next": "http://[::1/" + "%25" * 100}, {}),
    ("/dashboard/reset", {"token": "\u0000" * 10}, {}),
]


async def test_hostile_queries_and_headers_on_public_routes_log_no_traceback(
    client: httpx.AsyncClient, factory: Factory, vpx_logs: pytest.LogCaptureFixture
) -> None:
    key = await _site_key(client, await factory.account())
    for path, query, headers in HOSTILE_QUERIES:
        response = await client.get(path.format(site_key=key), params=query, headers=headers)
        assert response.status_code < 500, (path, query, headers, response.text[:300])
    assert_no_traceback(vpx_logs)


@pytest.mark.parametrize("path", ["/api/v1/signals/sig_1/purchase", "/api/v1/contacts/ct_1/reveal"])
async def test_a_deep_body_on_an_idempotent_route_without_a_body_is_not_a_5xx(
    client: httpx.AsyncClient, factory: Factory, vpx_logs: pytest.LogCaptureFixture, path: str
) -> None:
    account = await factory.account()
    headers = {**account.headers("live"), "content-type": "application/json", "idempotency-key": "deep-1"}
    response = await client.post(path, content=DEEP_ARRAY, headers=headers)
    assert 400 <= response.status_code < 500, response.text[:300]
    assert_no_traceback(vpx_logs)


# --- HSTS when the public address is https ---


@pytest.fixture
async def https_app(database_url: str, clock: FixedClock) -> AsyncIterator[FastAPI]:
    application = create_app(test_settings(database_url, public_url="https://vpx.example.com"), clock=clock)
    yield application
    await application.state.database.dispose()


HSTS = "max-age=31536000; includeSubDomains"


async def test_hsts_on_api_and_dashboard_answers_when_the_public_address_is_https(https_app: FastAPI) -> None:
    account = await Factory(https_app, https_app.state.clock).account()
    async with asgi_client(https_app) as http:
        answers = [
            await http.get("/api/v1/contacts/search?q=plumber", headers=account.headers("ro")),
            await http.get("/api/v1/contacts/search"),  # 401
            await http.get("/api/v1/contacts/search?q=%ff", headers=account.headers("ro")),  # 400
            await http.get("/api/v1/openapi.json"),
            await http.get("/dashboard/login"),
        ]
    assert [a.status_code for a in answers] == [200, 401, 400, 200, 200]
    for answer in answers:
        assert answer.headers["Strict-Transport-Security"] == HSTS, answer.request.url


async def test_no_hsts_when_the_public_address_is_http(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    for path in ("/api/v1/contacts/search?q=plumber", "/dashboard/login", "/api/v1/contacts/search?q=%ff"):
        response = await client.get(path, headers=account.headers("ro"))
        assert "Strict-Transport-Security" not in response.headers, path


# --- D26: IPv6 loopback is loopback ---


async def test_ipv6_loopback_is_allowed_with_private_addresses_and_delivered_to(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    full = account.headers("full")
    for url in ("https://[::1]/hook", "https://[::ffff:127.0.0.1]/hook", "https://[0:0:0:0:0:0:0:1]:8443/hook"):
        response = await client.post("/api/v1/webhooks", json={"url": url, "events": ["signal.created"]}, headers=full)
        assert response.status_code == 201, (url, response.text)
        await client.delete(f"/api/v1/webhooks/{response.json()['id']}", headers=full)
    receiver = Receiver(host="::1").start()
    try:
        created = await client.post(
            "/api/v1/webhooks", json={"url": receiver.url(), "events": ["contact.revealed"]}, headers=full
        )
        assert created.status_code == 201, created.text
        assert created.json()["url"].startswith("http://[::1]:")
        test = await client.post(f"/api/v1/webhooks/{created.json()['id']}/test", headers=full)
        assert test.status_code < 300, test.text
        assert await deliver_round(app) == 1
        [received] = await receiver.wait_for(1)
        assert received.path == "/hook" and received.headers["webhook-id"]
    finally:
        receiver.stop()


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://[fe80::1]/hook", "link-local"),
        ("https://169.254.10.10/hook", "link-local"),
        ("https://169.254.169.254/latest/meta-data/", "metadata"),
        ("https://[fd00:ec2::254]/", "metadata"),
        ("https://[::ffff:169.254.169.254]/", "metadata"),
        ("https://100.100.100.200/", "metadata"),
    ],
)
async def test_link_local_and_metadata_stay_refused_with_private_addresses(
    client: httpx.AsyncClient, factory: Factory, url: str, reason: str
) -> None:
    account = await factory.account()
    response = await client.post(
        "/api/v1/webhooks", json={"url": url, "events": ["signal.created"]}, headers=account.headers("full")
    )
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert error["field"] == "url" and reason in error["message"]


async def test_ipv6_loopback_is_refused_without_the_setting(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    app.state.settings = app.state.settings.model_copy(update={"webhook_allow_private": False})
    account = await factory.account()
    response = await client.post(
        "/api/v1/webhooks",
        json={"url": "https://[::1]/hook", "events": ["signal.created"]},
        headers=account.headers("full"),
    )
    assert response.status_code == 422, response.text
    assert "loopback" in response.json()["errors"][0]["message"]


async def test_mail_hosts_follow_the_same_guard(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    assert (await _mailbox(client, account, smtp_host="[::1]")).status_code == 201
    assert (await _mailbox(client, account, smtp_host="::1")).status_code == 201
    for host in ("fe80::1", "169.254.169.254", "[fd00:ec2::254]"):
        response = await _mailbox(client, account, smtp_host=host)
        assert response.status_code == 422 and "refused" in response.json()["detail"], host
    app.state.settings = app.state.settings.model_copy(update={"mailbox_allow_private": False})
    refused = await _mailbox(client, account, smtp_host="[::1]")
    assert refused.status_code == 422 and "loopback" in refused.json()["detail"]
