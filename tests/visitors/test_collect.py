"""The public collection endpoints (D33) through the whole app: the snippet's script, page views posted
as sendBeacon posts them, the pixel, opting out, the client address behind proxies, rate limits."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.conftest import asgi_client, test_settings
from tests.factories import Factory
from tests.visitors.dns_server import DnsServer
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.models import Visit

CHROME = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
)
BEACON = {"content-type": "text/plain;charset=UTF-8", "user-agent": CHROME}


@pytest.fixture
def settings(database_url: str, dns_server: DnsServer) -> Settings:
    return test_settings(
        database_url,
        dns_servers=f"{dns_server.host}:{dns_server.port}",
        dns_timeout_seconds=0.5,
        worker_in_process=False,
        public_url="https://vpx.example",
        trusted_proxies=["127.0.0.1"],
        visitor_address_rate_limit="5/minute",
    )


@pytest.fixture(autouse=True)
def now(clock: FixedClock) -> None:
    clock.set(datetime(2026, 11, 16, 15, 0, tzinfo=UTC))


async def site_key(client: httpx.AsyncClient, factory: Factory) -> tuple[str, str]:
    account = await factory.account()
    response = await client.post(
        "/api/v1/visitors/sites", json={"domain": "www.seller.example"}, headers=account.headers("full")
    )
    assert response.status_code == 201, response.text
    return response.json()["id"], response.json()["site_key"]


async def visits(app: FastAPI) -> list[Visit]:
    async with app.state.database.read_sessions() as session:
        return list(await session.scalars(select(Visit).order_by(Visit.id)))


def beacon(key: str, url: str = "https://www.seller.example/pricing", **fields: Any) -> str:
    view = {"site_key": key, "url": url, "referrer": "https://search.example/", "title": "Pricing"}
    return json.dumps({**view, **fields})


async def test_the_script_reports_to_the_public_url_and_is_cacheable(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    _, key = await site_key(client, factory)
    response = await client.get(f"/v/{key}.js")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    assert "max-age" in response.headers["cache-control"] and response.headers["access-control-allow-origin"] == "*"
    assert '"https://vpx.example/v/collect"' in response.text and f'"{key}"' in response.text
    assert "sendBeacon" in response.text and "cookie" not in response.text
    missing = await client.get("/v/vpxs_unknownunknownunknown00.js")
    assert missing.status_code == 404 and missing.headers["content-type"] == "application/problem+json"


async def test_a_beacon_in_text_plain_records_a_visit_and_answers_204(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, dns_server: DnsServer
) -> None:
    site_id, key = await site_key(client, factory)
    contact = await factory.contact(business_name="Acme Plumbing LLC", website="https://acmeplumbing.example")
    dns_server.add_ptr("203.0.113.44", "gw.acmeplumbing.example")
    dns_server.add_a("gw.acmeplumbing.example", "203.0.113.44")
    proxied = asgi_client(app, client_ip="127.0.0.1")
    async with proxied:
        response = await proxied.post(
            "/v/collect", content=beacon(key), headers={**BEACON, "x-forwarded-for": "203.0.113.44"}
        )
    assert response.status_code == 204 and response.headers["access-control-allow-origin"] == "*"
    [visit] = await visits(app)
    assert (visit.site_id, visit.channel, visit.identified, visit.method) == (site_id, "snippet", True, "reverse_dns")
    assert f"ct_{visit.contact_id}" == contact and visit.title == "Pricing"
    assert visit.referrer == "https://search.example/" and visit.network == "203.0.113.0/24"
    preflight = await client.options("/v/collect", headers={"origin": "https://www.seller.example"})
    assert preflight.status_code == 204 and "POST" in preflight.headers["access-control-allow-methods"]


async def test_forwarded_for_counts_only_from_a_trusted_proxy(
    factory: Factory, app: FastAPI, client: httpx.AsyncClient, dns_server: DnsServer
) -> None:
    _, key = await site_key(client, factory)
    await factory.contact(business_name="Acme Plumbing LLC", website="https://acmeplumbing.example")
    dns_server.add_ptr("203.0.113.44", "gw.acmeplumbing.example")
    dns_server.add_a("gw.acmeplumbing.example", "203.0.113.44")
    stranger = asgi_client(app, client_ip="198.51.100.3")
    async with stranger:
        response = await stranger.post(
            "/v/collect", content=beacon(key), headers={**BEACON, "x-forwarded-for": "203.0.113.44"}
        )
    assert response.status_code == 204
    [visit] = await visits(app)
    assert visit.identified is False and visit.network == "198.51.100.0/24"


async def test_global_privacy_control_and_do_not_track_opt_out(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    _, key = await site_key(client, factory)
    for header in ({"sec-gpc": "1"}, {"dnt": "1"}):
        response = await client.post("/v/collect", content=beacon(key), headers={**BEACON, **header})
        assert response.status_code == 204
    found = await visits(app)
    assert [(v.reason, v.network, v.identified) for v in found] == [("opted_out", None, False)] * 2


async def test_bad_page_views_are_refused_and_record_nothing(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    _, key = await site_key(client, factory)
    cases = [
        (beacon("vpxs_unknownunknownunknown00"), 404),
        (beacon(key, url="https://www.seller.example/" + "a" * 2048), 422),
        ("not json", 400),
        ("[" * 5000 + "]" * 5000, 400),
        (json.dumps({"site_key": key}), 422),
        (json.dumps([1, 2]), 422),
        ("x" * 20_000, 413),
    ]
    for number, (body, status) in enumerate(cases):
        # From an address each: every one of them spends its address's budget.
        headers = {**BEACON, "x-forwarded-for": f"198.51.100.{number + 1}"}
        response = await client.post("/v/collect", content=body, headers=headers)
        assert response.status_code == status, (body[:40], response.text)
        assert response.headers["content-type"] == "application/problem+json"
    unparsable = await client.post(
        "/v/collect",
        content=beacon(key, url="http://[::1/pricing"),
        headers={**BEACON, "x-forwarded-for": "198.51.100.99"},
    )
    assert unparsable.status_code == 422 and unparsable.json()["errors"][0]["field"] == "url"
    assert await visits(app) == []


async def test_the_pixel_answers_a_gif_whatever_the_key(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    _, key = await site_key(client, factory)
    known = await client.get(
        f"/v/{key}/pixel.gif", params={"url": "https://www.seller.example/newsletter"}, headers={"user-agent": CHROME}
    )
    unknown = await client.get("/v/vpxs_unknownunknownunknown00/pixel.gif", params={"url": "https://x.example/"})
    for response in (known, unknown):
        assert response.status_code == 200 and response.headers["content-type"] == "image/gif"
        assert response.content.startswith(b"GIF89a") and response.headers["cache-control"] == "no-store"
    [visit] = await visits(app)
    assert (visit.channel, visit.url) == ("pixel", "https://www.seller.example/newsletter")


async def test_page_views_are_limited_per_visitor_address(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    _, key = await site_key(client, factory)
    statuses = []
    for _ in range(7):
        response = await client.post("/v/collect", content=beacon(key), headers=BEACON)
        statuses.append(response.status_code)
    assert statuses == [204] * 5 + [429] * 2
    assert len(await visits(app)) == 5


async def test_a_page_view_that_is_not_json_still_spends_the_address_budget(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    _, key = await site_key(client, factory)
    garbage = ["[" * 5000 + "]" * 5000, "not json", json.dumps([1]), beacon("vpxs_unknownunknownunknown00")]
    statuses = []
    for body in garbage:
        response = await client.post("/v/collect", content=body, headers=BEACON)
        statuses.append(response.status_code)
    assert statuses == [400, 400, 422, 404]
    # The budget is 5 a minute: the four refused bodies spent four of them.
    allowed = await client.post("/v/collect", content=beacon(key), headers=BEACON)
    limited = await client.post("/v/collect", content=beacon(key), headers=BEACON)
    assert (allowed.status_code, limited.status_code) == (204, 429)
    assert len(await visits(app)) == 1


async def test_a_page_view_is_stored_clean_and_within_its_column(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    _, key = await site_key(client, factory)
    long_query = "https://www.seller.example/search?q=" + "é" * 1900
    many_emails = "https://www.seller.example/?" + "&".join(["e=a@b.co"] * 220)
    for url in (long_query, many_emails[:2048]):
        response = await client.post("/v/collect", content=beacon(key, url=url), headers=BEACON)
        assert response.status_code == 204, response.text
    credentials = beacon(
        key,
        url="https://alice:S3cret@www.seller.example/users/alice%40prospect.example?sessionid=1234&page=2",
        referrer="https://bob:hunter2@search.example/?apikey=abc",
    )
    assert (await client.post("/v/collect", content=credentials, headers=BEACON)).status_code == 204
    pixel = await client.get(f"/v/{key}/pixel.gif", headers={"referer": "http://[::1/broken", "user-agent": CHROME})
    assert pixel.status_code == 200
    found = await visits(app)
    assert [len(v.url) <= 2048 for v in found] == [True] * 3
    assert found[0].url.startswith("https://www.seller.example/search")
    # Cleaned, the second is longer than a URL may be: it loses its query string.
    assert found[1].url == "https://www.seller.example/"
    assert found[2].url == "https://www.seller.example/users/redacted?sessionid=redacted&page=2"
    assert found[2].referrer == "https://search.example/?apikey=redacted"
