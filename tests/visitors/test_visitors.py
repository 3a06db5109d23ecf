"""Visitor identification (D33) over the real API, a real DNS server on loopback (dnslib) and imported
range files: sites, server-side identify by each method and each reason, what a visit keeps, alerts at
most every 30 minutes, topic activity, reading visits and companies, the retention purge."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select, text

from tests import factories
from tests.conftest import test_settings
from tests.factories import Factory
from tests.visitors.dns_server import DnsServer
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.models import TopicActivity, Visit, VisitorSite, WebhookDelivery
from vpx.visitors import range_files
from vpx.visitors import service as visitor_service
from vpx.visitors.index import import_ranges
from vpx.worker.loop import Worker

NOW = datetime(2026, 11, 16, 15, 0, tzinfo=UTC)
CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"


@pytest.fixture
def settings(database_url: str, dns_server: DnsServer) -> Settings:
    return test_settings(
        database_url,
        dns_servers=f"{dns_server.host}:{dns_server.port}",
        dns_timeout_seconds=0.5,
        worker_in_process=False,
        webhook_allow_private=True,
        public_url="https://vpx.example",
    )


@pytest.fixture(autouse=True)
def afternoon(clock: FixedClock) -> None:
    clock.set(NOW)


async def site(client: httpx.AsyncClient, account: factories.TestAccount, **fields: Any) -> dict[str, Any]:
    body = {"domain": "www.seller.example", "name": "Seller", **fields}
    response = await client.post("/api/v1/visitors/sites", json=body, headers=account.headers("full"))
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def identify(
    client: httpx.AsyncClient, account: factories.TestAccount, site_id: str, ip: str, **fields: Any
) -> dict[str, Any]:
    body = {"site_id": site_id, "ip": ip, "url": "https://www.seller.example/pricing", "user_agent": CHROME}
    body.update(fields)
    response = await client.post("/api/v1/visitors/identify", json=body, headers=account.headers("full"))
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


async def load_ranges(app: FastAPI, tmp_path: Path, name: str, content: str, kind: str = "csv") -> int:
    path = tmp_path / name
    path.write_text(content)
    problems: list[range_files.FileProblem] = []
    reader = {"csv": range_files.read_csv, "iptoasn": range_files.read_iptoasn}[kind]
    count = await import_ranges(app.state.database, source=name, format=kind, rows=reader(path, problems), now=NOW)
    assert problems == []
    await app.state.visitors.ranges.refresh(force=True)
    return count


async def acme(factory: Factory, **fields: Any) -> str:
    values = {"business_name": "Acme Plumbing LLC", "website": "https://www.acmeplumbing.example"}
    values.update(fields)
    return await factory.contact(**values)


# --- Sites ---


async def test_sites_belong_to_their_account_and_give_a_snippet(client: httpx.AsyncClient, factory: Factory) -> None:
    account, other = await factory.account(), await factory.account()
    created = await site(client, account, domain="https://Shop.Seller.example/")
    assert created["domain"] == "shop.seller.example" and created["topic"] == "shop.seller.example"
    assert created["site_key"].startswith("vpxs_")
    assert created["snippet"] == f'<script async src="https://vpx.example/v/{created["site_key"]}.js"></script>'
    listed = await client.get("/api/v1/visitors/sites", headers=account.headers("full"))
    assert [s["id"] for s in listed.json()["sites"]] == [created["id"]]
    for method, path in (
        ("GET", f"/api/v1/visitors/sites/{created['id']}"),
        ("DELETE", f"/api/v1/visitors/sites/{created['id']}"),
    ):
        response = await client.request(method, path, headers=other.headers("full"))
        assert response.status_code == 404, response.text
    response = await client.post(
        "/api/v1/visitors/identify",
        json={"site_id": created["id"], "ip": "198.51.100.7", "url": "https://x.example/"},
        headers=other.headers("full"),
    )
    assert response.status_code == 404
    refused = await client.post("/api/v1/visitors/sites", json={"domain": "a.example"}, headers=account.headers())
    assert refused.status_code == 403
    deleted = await client.delete(f"/api/v1/visitors/sites/{created['id']}", headers=account.headers("full"))
    assert deleted.status_code == 204
    gone = await client.get(f"/v/{created['site_key']}.js")
    assert gone.status_code == 404


async def test_sites_are_listed_by_pages_oldest_first(
    client: httpx.AsyncClient, factory: Factory, clock: FixedClock
) -> None:
    account, other = await factory.account(), await factory.account()
    created = []
    for number in range(5):
        # Two sites share each instant: the id breaks the tie.
        clock.set(NOW + timedelta(seconds=number // 2))
        created.append((await site(client, account, domain=f"www.s{number}.example"))["id"])
    await site(client, other)
    everything = await client.get("/api/v1/visitors/sites", headers=account.headers("full"))
    assert everything.status_code == 200 and everything.json()["next_cursor"] is None
    in_order = [s["id"] for s in everything.json()["sites"]]
    assert sorted(in_order) == sorted(created) and in_order[4] == created[4]
    seen: list[str] = []
    cursor = None
    for _ in range(3):
        params: dict[str, str | int] = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = await client.get("/api/v1/visitors/sites", params=params, headers=account.headers("full"))
        assert page.status_code == 200, page.text
        seen += [s["id"] for s in page.json()["sites"]]
        cursor = page.json()["next_cursor"]
    assert seen == in_order and cursor is None
    for params in ({"cursor": "not-a-cursor"}, {"limit": 0}, {"limit": 101}):
        refused = await client.get("/api/v1/visitors/sites", params=params, headers=account.headers("full"))
        assert refused.status_code == 422, (params, refused.text)


async def test_an_account_has_a_bounded_number_of_sites(
    client: httpx.AsyncClient, factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(visitor_service, "MAX_SITES_PER_ACCOUNT", 3)
    account, other = await factory.account(), await factory.account()
    kept = [await site(client, account, domain=f"www.s{n}.example") for n in range(3)]
    refused = await client.post(
        "/api/v1/visitors/sites", json={"domain": "www.s3.example"}, headers=account.headers("full")
    )
    assert refused.status_code == 409 and refused.json()["code"] == "conflict", refused.text
    assert "at most 3 sites" in refused.json()["detail"]
    await site(client, other)  # another account's count is its own
    deleted = await client.delete(f"/api/v1/visitors/sites/{kept[0]['id']}", headers=account.headers("full"))
    assert deleted.status_code == 204
    await site(client, account, domain="www.s3.example")


async def test_sites_created_at_once_stay_within_the_cap(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A cap holds under concurrency: each creation counts after the others of its account committed.
    monkeypatch.setattr(visitor_service, "MAX_SITES_PER_ACCOUNT", 3)
    account = await factory.account()
    answers = await asyncio.gather(
        *(
            client.post("/api/v1/visitors/sites", json={"domain": f"www.c{n}.example"}, headers=account.headers("full"))
            for n in range(12)
        )
    )
    assert sorted(a.status_code for a in answers) == [201] * 3 + [409] * 9, [a.text for a in answers]
    async with app.state.database.read_sessions() as session:
        kept = await session.scalar(
            select(func.count()).select_from(VisitorSite).where(VisitorSite.account_id == account.id)
        )
    assert kept == 3


# --- Identification ---


async def test_an_operator_range_identifies_its_business_by_contact_or_domain(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, tmp_path: Path
) -> None:
    account = await factory.account()
    created = await site(client, account)
    by_domain = await acme(factory)
    by_id = await acme(factory, business_name="Beta Dental", website=None, city="Boulder")
    number = by_id.removeprefix("ct_")
    await load_ranges(
        app,
        tmp_path,
        "offices.csv",
        f"network,domain,contact_id,organisation\n203.0.113.0/25,acmeplumbing.example,,Acme\n"
        f"203.0.113.128/25,,{number},Beta\n2001:db8:aa::/48,acmeplumbing.example,,Acme v6\n",
    )
    found = await identify(client, account, created["id"], "203.0.113.9")
    assert found["identified"] is True and found["method"] == "ip_range" and found["confidence"] == 0.9
    assert found["company"] == {
        "contact_id": by_domain,
        "business_name": "Acme Plumbing LLC",
        "domain": "acmeplumbing.example",
        "city": "Denver",
        "state": "CO",
        "industry": "home-services",
    }
    assert "reason" not in found
    second = await identify(client, account, created["id"], "203.0.113.200")
    assert second["company"]["contact_id"] == by_id and second["confidence"] == 0.95
    v6 = await identify(client, account, created["id"], "2001:db8:aa:1::99")
    assert v6["company"]["contact_id"] == by_domain
    async with app.state.database.read_sessions() as session:
        networks = sorted(await session.scalars(select(Visit.network)))
    assert networks == ["2001:db8:aa::/48", "203.0.113.0/24", "203.0.113.0/24"]


async def test_reverse_dns_identifies_a_forward_confirmed_business_name(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, dns_server: DnsServer, tmp_path: Path
) -> None:
    account = await factory.account()
    created = await site(client, account)
    contact = await acme(factory)
    dns_server.add_ptr("198.51.100.7", "gw.denver.acmeplumbing.example")
    dns_server.add_a("gw.denver.acmeplumbing.example", "198.51.100.7")
    # A PTR that claims the business but does not resolve back to the address is anyone's to write.
    dns_server.add_ptr("198.51.100.8", "mail.acmeplumbing.example")
    dns_server.add_a("mail.acmeplumbing.example", "192.0.2.1")
    # A customer-line name of an ISP never names a business, even forward-confirmed.
    dns_server.add_ptr("198.51.100.9", "static-198-51-100-9.acmeplumbing.example")
    dns_server.add_a("static-198-51-100-9.acmeplumbing.example", "198.51.100.9")
    found = await identify(client, account, created["id"], "198.51.100.7")
    assert (found["identified"], found["method"], found["confidence"]) == (True, "reverse_dns", 0.8)
    assert found["company"]["contact_id"] == contact
    for ip in ("198.51.100.8", "198.51.100.9", "198.51.100.10"):
        missed = await identify(client, account, created["id"], ip)
        assert (missed["identified"], missed["reason"]) == (False, "unknown"), ip
    # Inside an ISP's range, the same evidence is a small business on a static line: less sure.
    await load_ranges(
        app, tmp_path, "ip2asn.tsv", "198.51.100.0\t198.51.100.255\t7922\tUS\tCOMCAST-7922\n", kind="iptoasn"
    )
    dns_server.add_ptr("198.51.100.20", "office.acmeplumbing.example")
    dns_server.add_a("office.acmeplumbing.example", "198.51.100.20")
    on_isp = await identify(client, account, created["id"], "198.51.100.20")
    assert (on_isp["method"], on_isp["confidence"]) == ("reverse_dns", 0.6)
    home = await identify(client, account, created["id"], "198.51.100.21")
    assert (home["identified"], home["reason"]) == (False, "isp")


async def test_unidentified_visits_say_why(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, tmp_path: Path
) -> None:
    account = await factory.account()
    created = await site(client, account)
    await load_ranges(app, tmp_path, "asn.tsv", "192.0.2.0\t192.0.2.255\t16509\tUS\tAMAZON-02\n", kind="iptoasn")
    cases = {
        ("10.1.2.3", CHROME): "private_address",
        ("100.64.0.9", CHROME): "private_address",
        ("fd00::1", CHROME): "private_address",
        ("192.0.2.44", CHROME): "hosting",
        ("198.51.100.99", CHROME): "unknown",  # a documentation block resolves like a public address
        ("198.51.100.99", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"): "bot",
    }
    for (ip, agent), reason in cases.items():
        found = await identify(client, account, created["id"], ip, user_agent=agent)
        assert (found["identified"], found.get("reason"), found.get("company")) == (False, reason, None), ip
    bad = await client.post(
        "/api/v1/visitors/identify",
        json={"site_id": created["id"], "ip": "not-an-address", "url": "https://x.example/"},
        headers=account.headers("full"),
    )
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "ip"
    long = await client.post(
        "/api/v1/visitors/identify",
        json={"site_id": created["id"], "ip": "198.51.100.1", "url": "https://x.example/" + "a" * 2100},
        headers=account.headers("full"),
    )
    assert long.status_code == 422
    for url in ("http://[::1/pricing", "https://x.example:99999/"):
        unparsable = await client.post(
            "/api/v1/visitors/identify",
            json={"site_id": created["id"], "ip": "198.51.100.1", "url": url},
            headers=account.headers("full"),
        )
        assert unparsable.status_code == 422 and unparsable.json()["errors"][0]["field"] == "url", url


async def test_a_visit_keeps_no_address_and_no_personal_query_values(
    client: httpx.AsyncClient,
    factory: Factory,
    app: FastAPI,
    caplog: pytest.LogCaptureFixture,
    request: pytest.FixtureRequest,
) -> None:
    caplog.set_level(logging.DEBUG)
    # The service's loggers do not propagate to the root logger: listen to them directly.
    logging.getLogger("vpx").addHandler(caplog.handler)
    request.addfinalizer(lambda: logging.getLogger("vpx").removeHandler(caplog.handler))
    account = await factory.account()
    created = await site(client, account)
    url = "https://www.seller.example/welcome?utm_source=mail&email=dana%40prospect.example&token=Ab3dEf6hIj9kLm2nOp5q#top"
    await identify(client, account, created["id"], "198.51.100.77", url=url)
    async with app.state.database.read_sessions() as session:
        visit = await session.scalar(select(Visit))
        dumped = " ".join(str(v) for v in (await session.execute(text("SELECT * FROM visits"))).one())
    assert visit is not None and visit.network == "198.51.100.0/24"
    assert visit.url == "https://www.seller.example/welcome?utm_source=mail&email=redacted&token=redacted"
    assert "198.51.100.77" not in dumped and "dana" not in dumped
    assert "198.51.100.77" not in caplog.text


async def test_an_identified_visit_alerts_at_most_every_30_minutes_and_counts_as_research(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, clock: FixedClock, tmp_path: Path
) -> None:
    account = await factory.account()
    created = await site(client, account, topic="Fleet Software")
    hook = await client.post(
        "/api/v1/webhooks",
        json={"url": "http://127.0.0.1:9/hook", "events": ["visitor.identified"]},
        headers=account.headers("full"),
    )
    assert hook.status_code == 201, hook.text
    contact = await acme(factory)
    await load_ranges(app, tmp_path, "office.csv", "network,domain\n203.0.113.0/24,acmeplumbing.example\n")
    first = await identify(client, account, created["id"], "203.0.113.5")
    await identify(client, account, created["id"], "203.0.113.6", url="https://www.seller.example/demo")
    clock.set(NOW + timedelta(minutes=31))
    await identify(client, account, created["id"], "203.0.113.7")
    async with app.state.database.read_sessions() as session:
        alerts = list(await session.scalars(select(WebhookDelivery).order_by(WebhookDelivery.id)))
        activity = await session.scalar(
            select(func.sum(TopicActivity.events)).where(TopicActivity.topic == "fleet software")
        )
    assert [a.event_type for a in alerts] == ["visitor.identified", "visitor.identified"]
    data = json.loads(alerts[0].payload)["data"]
    assert data == {
        "visit_id": first["visit_id"],
        "site_id": created["id"],
        "company": first["company"],
        "url": "https://www.seller.example/pricing",
        "method": "ip_range",
        "confidence": 0.9,
        "occurred_at": "2026-11-16T15:00:00Z",
    }
    assert data["company"]["contact_id"] == contact
    assert activity == 3


async def test_visits_read_newest_first_by_pages_and_companies_add_up(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, tmp_path: Path
) -> None:
    account = await factory.account()
    created = await site(client, account)
    other_site = await site(client, account, domain="docs.seller.example")
    contact = await acme(factory)
    await load_ranges(app, tmp_path, "office.csv", "network,domain\n203.0.113.0/24,acmeplumbing.example\n")
    pages = ["/", "/pricing", "/pricing", "/demo"]
    for minute, page in enumerate(pages):
        await identify(
            client, account, created["id"], "203.0.113.5", url="https://www.seller.example" + page,
            occurred_at=(NOW + timedelta(minutes=minute)).isoformat(),
        )  # fmt: skip
    await identify(client, account, created["id"], "198.51.100.50")
    await identify(client, account, other_site["id"], "203.0.113.5")
    seen: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"site_id": created["id"], "limit": 2, **({"cursor": cursor} if cursor else {})}
        response = await client.get("/api/v1/visitors/visits", params=params, headers=account.headers())
        assert response.status_code == 200, response.text
        seen += response.json()["visits"]
        cursor = response.json()["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 5 and len({v["visit_id"] for v in seen}) == 5
    assert [v["occurred_at"] for v in seen] == sorted((v["occurred_at"] for v in seen), reverse=True)
    identified = await client.get(
        "/api/v1/visitors/visits", params={"identified": "false"}, headers=account.headers("ro")
    )
    assert [v["reason"] for v in identified.json()["visits"]] == ["unknown"]
    companies = await client.get(
        "/api/v1/visitors/companies", params={"site_id": created["id"]}, headers=account.headers()
    )
    [row] = companies.json()["companies"]
    assert (row["contact_id"], row["visits"], row["pages"]) == (contact, 4, 3)
    assert row["first_seen"] == "2026-11-16T15:00:00Z" and row["last_seen"] == "2026-11-16T15:03:00Z"
    everywhere = await client.get("/api/v1/visitors/companies", headers=account.headers())
    assert everywhere.json()["companies"][0]["visits"] == 5
    bad = await client.get("/api/v1/visitors/visits", params={"cursor": "nope"}, headers=account.headers())
    assert bad.status_code == 422


async def test_the_worker_purges_visits_past_their_retention(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, settings: Settings, clock: FixedClock
) -> None:
    account = await factory.account()
    created = await site(client, account)
    await identify(client, account, created["id"], "198.51.100.1", occurred_at="2026-08-01T00:00:00Z")
    await identify(client, account, created["id"], "198.51.100.2")
    worker = Worker(app.state.database, settings, clock=clock)
    assert await worker._visit_purge() == 1
    assert await worker._visit_purge() == 0
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(select(func.count()).select_from(Visit)) == 1
