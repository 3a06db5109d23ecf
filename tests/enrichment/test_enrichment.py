"""Enrichment with the customer's own provider keys (D32), over the real API and the local fakes of
Hunter, People Data Labs and Apollo: keys sealed and never shown, the per-field waterfall with
provenance, preview-only queries for unrevealed contacts, failures that never fail the request,
retries, quotas, monthly limits, the cache, dry runs, suppression, isolation between accounts."""

from __future__ import annotations

import asyncio
import base64
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from standardwebhooks import Webhook

from tests import factories
from tests.conftest import test_settings
from tests.enrichment.fakes import FakeCompany, FakeProviders
from tests.factories import Factory
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliver_round, payload, receiver
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.enrichment import batch as enrichment_batches
from vpx.enrichment.calls import MESSAGE_CHARS
from vpx.enrichment.providers.base import ProviderError
from vpx.models import Contact, DecisionMaker, EnrichmentBatch, EnrichmentBatchItem, EnrichmentKey, EnrichmentUsage

__all__ = ["receiver"]
KEYS = {"hunter": "hunter-test-key", "pdl": "pdl-test-key", "apollo": "apollo-test-key"}


@pytest.fixture
def settings(database_url: str, fake_providers: FakeProviders) -> Settings:
    return test_settings(
        database_url,
        hunter_base_url=fake_providers.hunter.base_url,
        pdl_base_url=fake_providers.pdl.base_url,
        apollo_base_url=fake_providers.apollo.base_url,
        enrichment_timeout_seconds=2.0,
        enrichment_rate_limit="1000/second",
        worker_in_process=False,
        webhook_allow_private=True,
        webhook_retry_jitter=0.0,
    )


@pytest.fixture(autouse=True)
def instant_waits(app: FastAPI) -> list[float]:
    """Retries wait what providers say; the tests record the waits instead of sleeping them."""
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    app.state.enrichment.calls.sleep = sleep
    return waits


async def store_keys(client: httpx.AsyncClient, account: factories.TestAccount, *names: str, **limits: int) -> None:
    for name in names:
        body: dict[str, Any] = {"api_key": KEYS[name]}
        if name in limits:
            body["monthly_limit"] = limits[name]
        response = await client.put(f"/api/v1/enrichment/keys/{name}", json=body, headers=account.headers("full"))
        assert response.status_code == 200, response.text


async def acme(factory: Factory, app: FastAPI, **fields: Any) -> str:
    """Acme Plumbing of Austin in the catalogue (the fakes know it), with Maria Lopez its owner."""
    values: dict[str, Any] = {
        "business_name": "Acme Plumbing LLC", "city": "Austin", "state": "TX", "phone": None, "email": None,
        "website": "https://acmeplumbing.com", "street": "1 Main St", "license_number": None,
    }  # fmt: skip
    values.update(fields)
    contact_id = await factory.contact(**values)
    async with app.state.database.write_sessions() as session, session.begin():
        session.add(
            DecisionMaker(
                contact_id=int(contact_id.removeprefix("ct_")), name="Maria Lopez", title=None, role="owner",
                phone=None, registry_name="test", record_id=contact_id, created_at=app.state.clock.now(),
            )
        )  # fmt: skip
    return contact_id


async def enrich(
    client: httpx.AsyncClient, account: factories.TestAccount, contact_id: str, **body: Any
) -> dict[str, Any]:
    response = await client.post(f"/api/v1/contacts/{contact_id}/enrich", json=body, headers=account.headers("full"))
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def attempts(result: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {
        a["provider"]: (a["status"], a.get("reason") or (a.get("error") or {}).get("code")) for a in result["attempts"]
    }


# --- Keys ---


async def test_keys_are_sealed_shown_by_last_four_and_never_returned(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    account = await factory.account()
    put = await client.put(
        "/api/v1/enrichment/keys/pdl", json={"api_key": "pdl-live-SECRET-9876", "monthly_limit": 100},
        headers=account.headers("full"),
    )  # fmt: skip
    assert put.status_code == 200
    assert put.json()["last4"] == "9876" and put.json()["monthly_limit"] == 100
    await store_keys(client, account, "hunter")
    listed = await client.get("/api/v1/enrichment/keys", headers=account.headers("full"))
    assert [k["provider"] for k in listed.json()["keys"]] == ["pdl", "hunter"]  # the order first stored
    replaced = await client.put(
        "/api/v1/enrichment/keys/pdl", json={"api_key": "pdl-live-OTHER-1234"}, headers=account.headers("full")
    )
    assert replaced.json()["last4"] == "1234" and replaced.json()["monthly_limit"] is None
    listed = await client.get("/api/v1/enrichment/keys", headers=account.headers("full"))
    assert [k["provider"] for k in listed.json()["keys"]] == ["pdl", "hunter"]  # a replaced key keeps its place
    for text in (put.text, replaced.text, listed.text, caplog.text):
        assert "SECRET" not in text and "pdl-live-OTHER" not in text
    async with app.state.database.read_sessions() as session:
        sealed = list(await session.scalars(select(EnrichmentKey.key_sealed)))
    assert sealed and all("pdl-live" not in s and "hunter-test" not in s for s in sealed)
    if database_url.startswith("sqlite"):
        raw = await asyncio.to_thread(Path(database_url.split(":///", 1)[1]).read_bytes)
        assert b"pdl-live-OTHER-1234" not in raw and b"pdl-live-SECRET-9876" not in raw
    gone = await client.delete("/api/v1/enrichment/keys/pdl", headers=account.headers("full"))
    assert gone.status_code == 204
    again = await client.delete("/api/v1/enrichment/keys/pdl", headers=account.headers("full"))
    assert again.status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PUT", "/api/v1/enrichment/keys/hunter", {"api_key": "abcdef"}),
        ("GET", "/api/v1/enrichment/keys", None),
        ("POST", "/api/v1/contacts/ct_1/enrich", {}),
        ("GET", "/api/v1/contacts/ct_1/enrichment", None),
        ("POST", "/api/v1/contacts/batch-enrich", {"contact_ids": ["ct_1"]}),
    ],
)
async def test_read_only_and_standard_keys_are_refused(
    client: httpx.AsyncClient, factory: Factory, method: str, path: str, body: dict[str, Any] | None
) -> None:
    account = await factory.account()
    for key_type in ("ro", "live"):
        response = await client.request(method, path, json=body, headers=account.headers(key_type))
        assert response.status_code == 403 and response.json()["code"] == "insufficient_permission"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/enrichment/keys/clearbit", {"api_key": "abcdef"}),
        ("/api/v1/enrichment/keys/hunter", {"api_key": "has space"}),
        ("/api/v1/enrichment/keys/hunter", {"api_key": "abcdef", "monthly_limit": 0}),
        ("/api/v1/enrichment/keys/hunter", {"api_key": "abcdef", "extra": 1}),
    ],
)
async def test_bad_keys_are_422(client: httpx.AsyncClient, factory: Factory, path: str, body: dict[str, Any]) -> None:
    account = await factory.account()
    response = await client.put(path, json=body, headers=account.headers("full"))
    assert response.status_code == 422 and response.json()["code"] == "invalid_parameters"
    listed = await client.get("/api/v1/enrichment/keys", headers=account.headers("full"))
    assert listed.json()["keys"] == []


# --- The waterfall ---


async def test_each_missing_field_is_asked_once_in_order_and_kept_with_provenance(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, fakes: FakeProviders
) -> None:
    account = await factory.account(credits=5)
    await store_keys(client, account, "hunter", "pdl", "apollo")
    contact_id = await acme(factory, app)
    assert (await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=account.headers())).status_code == 200
    # Hunter knows Acme's email but not its size; PDL knows its size; Apollo everything.
    fakes.hunter.companies[0].employee_count = None
    fakes.pdl.companies[0].email = None
    result = await enrich(client, account, contact_id, providers=["hunter", "pdl", "apollo"])
    assert result["credits_charged"] == 0
    fields = result["fields"]
    assert fields["email"]["value"] == "info@acmeplumbing.com" and fields["email"]["provider"] == "hunter"
    assert fields["linkedin_url"]["provider"] == "hunter"
    assert fields["employee_count"] == {**fields["employee_count"], "value": "42", "provider": "pdl"}
    assert fields["phone"]["provider"] == "hunter" and fields["phone"]["value"] == "+15125550143"
    assert "website" not in fields  # the revealed registry record has one: never overwritten, never asked
    [maria] = result["decision_makers"]
    assert maria["name"] == "Maria Lopez" and maria["fields"]["email"]["value"] == "maria@acmeplumbing.com"
    assert [a["provider"] for a in result["attempts"]] == ["hunter", "pdl", "apollo"]
    assert result["attempts"][0]["status"] == "found"
    # Apollo was asked only for what was still missing: nothing was, so it was not called.
    assert attempts(result)["apollo"] == ("skipped", "nothing_missing") and not fakes.apollo.requests
    # The registry record stands beside the enrichment.
    shown = (await client.get(f"/api/v1/contacts/{contact_id}", headers=account.headers())).json()
    assert shown["website"] == "https://acmeplumbing.com" and shown["email"] is None
    assert shown["enrichment"]["fields"]["email"]["value"] == "info@acmeplumbing.com"
    # Nothing is missing now: no provider is called again.
    sent = len(fakes.hunter.requests) + len(fakes.pdl.requests)
    again = await enrich(client, account, contact_id)
    assert {s for s, _ in attempts(again).values()} == {"skipped"}
    assert len(fakes.hunter.requests) + len(fakes.pdl.requests) == sent
    held = (await client.get(f"/api/v1/contacts/{contact_id}/enrichment", headers=account.headers("full"))).json()
    assert held["fields"] == again["fields"] == result["fields"]


async def test_an_unrevealed_contact_is_described_by_its_preview_only(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, fakes: FakeProviders
) -> None:
    account = await factory.account(credits=5)
    await store_keys(client, account, "pdl", "apollo")
    contact_id = await acme(factory, app, phone="+15125550143")
    result = await enrich(client, account, contact_id, fields=["linkedin_url", "employee_count"])
    for request in fakes.pdl.requests:
        sent = " ".join([request.path, *request.query.values(), request.body.decode()])
        assert "acmeplumbing" not in sent and "5550143" not in sent  # the hidden website and phone
        assert request.query.get("name") == "Acme Plumbing LLC" and request.query.get("locality") == "Austin"
    # Apollo needs a domain; PDL's answer gave none (only the fields asked), so Apollo cannot be asked.
    assert attempts(result)["apollo"][1] in ("insufficient_query", "nothing_missing")
    assert (await client.get(f"/api/v1/contacts/{contact_id}", headers=account.headers())).json()["preview"] is True


async def test_a_domain_found_by_one_provider_lets_the_next_one_ask(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, fakes: FakeProviders
) -> None:
    account = await factory.account()
    await store_keys(client, account, "hunter", "apollo")
    contact_id = await acme(factory, app, website=None)
    fakes.hunter.companies[0].employee_count = None
    result = await enrich(client, account, contact_id, fields=["website", "employee_count"])
    assert result["fields"]["website"]["provider"] == "hunter"
    assert result["fields"]["employee_count"]["provider"] == "apollo"
    assert fakes.apollo.requests[0].query["domain"] == "acmeplumbing.com"


async def test_a_failing_provider_never_fails_the_request(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, fakes: FakeProviders, instant_waits: list[float]
) -> None:
    account = await factory.account(credits=5)
    await store_keys(client, account, "hunter", "pdl", "apollo")
    contact_id = await acme(factory, app)
    await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=account.headers())  # Apollo needs the domain
    async with app.state.database.write_sessions() as session, session.begin():
        key = await session.scalar(select(EnrichmentKey).where(EnrichmentKey.provider == "hunter"))
        assert key is not None
        key.key_sealed = app.state.secrets.seal("hunter-wrong-key")
    fakes.pdl.fail_next(500)
    result = await enrich(client, account, contact_id, fields=["email", "linkedin_url", "employee_count"])
    assert attempts(result)["hunter"] == ("error", "provider_auth_failed")
    assert attempts(result)["pdl"] == ("error", "provider_unavailable")
    assert attempts(result)["apollo"][0] == "found" and result["fields"]["linkedin_url"]["provider"] == "apollo"
    assert "hunter-wrong-key" not in str(result)


async def test_rate_limits_are_retried_as_the_provider_says_and_quotas_never(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, fakes: FakeProviders, instant_waits: list[float]
) -> None:
    account = await factory.account(credits=5)
    await store_keys(client, account, "hunter", "apollo")
    contact_id = await acme(factory, app)
    await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=account.headers())  # Apollo needs the domain
    fakes.apollo.fail_next(429, retry_after="3")
    fakes.hunter.fail_next(429)  # Hunter's 429: the month's quota is exhausted
    result = await enrich(client, account, contact_id, providers=["hunter", "apollo"], fields=["employee_count"])
    assert attempts(result)["hunter"] == ("error", "provider_quota_exhausted") and len(fakes.hunter.requests) == 1
    assert attempts(result)["apollo"][0] == "found" and len(fakes.apollo.requests) == 2
    assert instant_waits == [3.0]
    fakes.reset()
    fakes.hunter.fail_next(403, times=3, retry_after="1")  # Hunter's 403: slow down
    again = await enrich(client, account, contact_id, providers=["hunter"], fields=["linkedin_url"], refresh=True)
    assert attempts(again)["hunter"] == ("rate_limited", "rate_limited") and len(fakes.hunter.requests) == 3


async def test_a_monthly_limit_stops_calls_and_counts_exactly(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, fakes: FakeProviders
) -> None:
    account = await factory.account()
    await store_keys(client, account, "pdl", pdl=1)
    first = await acme(factory, app)
    second = await acme(factory, app, business_name="Bright Smile Dental PC", city="Denver", state="CO")
    await enrich(client, account, first, fields=["linkedin_url"])
    result = await enrich(client, account, second, fields=["linkedin_url"])
    assert attempts(result)["pdl"] == ("skipped", "monthly_limit_reached")
    assert len(fakes.pdl.requests) == 1
    listed = (await client.get("/api/v1/enrichment/keys", headers=account.headers("full"))).json()
    assert listed["keys"][0]["requests_this_month"] == 1


async def test_answers_are_cached_misses_too_and_refresh_asks_again(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, fakes: FakeProviders
) -> None:
    account = await factory.account(credits=5)
    await store_keys(client, account, "apollo")
    contact_id = await acme(factory, app)
    await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=account.headers())  # Apollo needs the domain
    await enrich(client, account, contact_id, fields=["linkedin_url"])
    assert len(fakes.apollo.requests) == 1
    # The same request for another field: answered from the cache.
    cached = await enrich(client, account, contact_id, fields=["employee_count"])
    assert attempts(cached)["apollo"][0] == "cached" and len(fakes.apollo.requests) == 1
    assert cached["fields"]["employee_count"]["provider"] == "apollo"
    other = await acme(factory, app, business_name="Nobody Here LLC", website="https://nobody.example")
    await client.post(f"/api/v1/contacts/{other}/reveal", headers=account.headers())
    missed = await enrich(client, account, other, fields=["linkedin_url"])
    assert attempts(missed)["apollo"][0] == "not_found"
    again = await enrich(client, account, other, fields=["linkedin_url"])
    assert attempts(again)["apollo"][0] == "cached" and len(fakes.apollo.requests) == 2
    fakes.apollo.companies.append(FakeCompany(name="Nobody Here", domain="nobody.example", employee_count=3,
                                              linkedin_url="https://www.linkedin.com/company/nobody"))  # fmt: skip
    fresh = await enrich(client, account, other, fields=["linkedin_url"], refresh=True)
    assert attempts(fresh)["apollo"][0] == "found" and len(fakes.apollo.requests) == 3


async def test_a_dry_run_plans_and_calls_nothing(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, fakes: FakeProviders
) -> None:
    account = await factory.account()
    await store_keys(client, account, "hunter", "pdl")
    contact_id = await acme(factory, app)
    result = await enrich(client, account, contact_id, providers=["hunter", "pdl", "apollo"], dry_run=True)
    assert result["dry_run"] is True and result["fields"] == {}
    assert attempts(result) == {"hunter": ("planned", None), "pdl": ("planned", None), "apollo": ("skipped", "no_key")}
    assert "decision_maker.email" in result["attempts"][0]["fields"]
    assert not fakes.hunter.requests and not fakes.pdl.requests


async def test_suppressed_contacts_are_451_and_no_provider_is_called(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, fakes: FakeProviders
) -> None:
    account = await factory.account()
    await store_keys(client, account, "hunter")
    contact_id = await acme(factory, app)
    await factory.suppress("contact", contact_id, reason="fcra")
    response = await client.post(f"/api/v1/contacts/{contact_id}/enrich", json={}, headers=account.headers("full"))
    assert response.status_code == 451 and response.json()["code"] == "suppressed"
    assert not fakes.hunter.requests
    unknown = await client.post("/api/v1/contacts/ct_999999/enrich", json={}, headers=account.headers("full"))
    assert unknown.status_code == 404


async def test_bad_requests_are_422(client: httpx.AsyncClient, factory: Factory, app: FastAPI) -> None:
    account = await factory.account()
    contact_id = await acme(factory, app)
    for body in ({"providers": ["clearbit"]}, {"fields": ["fax"]}, {"providers": ["pdl", "pdl"]}, {"refresh": "yes"}):
        response = await client.post(
            f"/api/v1/contacts/{contact_id}/enrich", json=body, headers=account.headers("full")
        )
        assert response.status_code == 422, body


async def test_enrichment_belongs_to_the_account_that_paid_for_it(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, fakes: FakeProviders
) -> None:
    payer, other = await factory.account(credits=5), await factory.account(credits=5)
    await store_keys(client, payer, "apollo")
    contact_id = await acme(factory, app)
    await enrich(client, payer, contact_id, fields=["linkedin_url"])
    theirs = (await client.get(f"/api/v1/contacts/{contact_id}/enrichment", headers=other.headers("full"))).json()
    assert theirs["fields"] == {}
    await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=other.headers())
    shown = (await client.get(f"/api/v1/contacts/{contact_id}", headers=other.headers())).json()
    assert shown["enrichment"] is None
    async with app.state.database.read_sessions() as session:
        contact = await session.get(Contact, int(contact_id.removeprefix("ct_")))
    assert contact is not None and contact.email is None  # never merged into the shared catalogue


@pytest.mark.postgres_only
async def test_a_monthly_limit_is_exact_under_concurrent_enrichments(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, fakes: FakeProviders, backend: str
) -> None:
    if backend != "postgresql":
        pytest.skip("concurrency is proven on PostgreSQL (SQLite serialises every writer)")
    account = await factory.account()
    await store_keys(client, account, "pdl", pdl=5)
    contacts = [await acme(factory, app, business_name=f"Acme Plumbing {i} LLC") for i in range(20)]
    results = await asyncio.gather(*(enrich(client, account, c, fields=["linkedin_url"]) for c in contacts))
    called = [r for r in results if attempts(r)["pdl"][0] != "skipped"]
    assert len(called) == 5 and len(fakes.pdl.requests) == 5
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(select(EnrichmentUsage.requests)) == 5


async def test_batch_enrichment_reports_each_contact_and_announces_completion(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, fakes: FakeProviders, receiver: Receiver,
    clock: FixedClock,
) -> None:  # fmt: skip
    clock.set(datetime.now(UTC))
    account = await factory.account(credits=5)
    await store_keys(client, account, "hunter", "pdl")
    found = await acme(factory, app)
    bare = await acme(factory, app, business_name="Nobody Here LLC", website="https://nobody.example")
    barred = await acme(factory, app, business_name="Barred Plumbing LLC")
    await factory.suppress("contact", barred)
    ids = [found, bare, barred, "ct_999999", found]
    response = await client.post(
        "/api/v1/contacts/batch-enrich",
        json={"contact_ids": ids, "fields": ["email", "decision_maker.email"], "webhook_url": receiver.url()},
        headers=account.headers("full"),
    )
    assert response.status_code == 202, response.text
    accepted = response.json()
    assert accepted["total"] == 4 and accepted["status_url"] == response.headers["location"]
    progress = (await client.get(accepted["status_url"], headers=account.headers("full"))).json()
    assert progress["status"] == "processing" and progress["done"] == 0
    assert await enrichment_batches.run_due_batch(
        app.state.database, waterfall=app.state.enrichment, box=app.state.secrets, clock=clock
    )
    progress = (await client.get(accepted["status_url"], headers=account.headers("full"))).json()
    assert progress["status"] == "completed" and progress["done"] == 4
    assert [(i["contact_id"], i["status"]) for i in progress["items"]] == [
        (found, "enriched"), (bare, "not_found"), (barred, "suppressed"), ("ct_999999", "unknown_contact"),
    ]  # fmt: skip
    assert progress["items"][0]["found"] == ["decision_maker.email", "email"]
    assert await deliver_round(app) == 1
    [delivered] = receiver.received()
    Webhook(accepted["webhook_secret"]).verify(delivered.body, delivered.headers)
    event = payload(delivered.body)
    assert event["type"] == "enrichment.completed" and event["data"]["batch_id"] == accepted["batch_id"]
    assert event["data"]["counts"] == {"enriched": 1, "not_found": 1, "suppressed": 1, "unknown_contact": 1}
    async with app.state.database.read_sessions() as session:
        stored = await session.scalar(select(EnrichmentBatch.webhook_secret_sealed))
    assert stored is not None and accepted["webhook_secret"] not in stored  # sealed at rest
    assert not await enrichment_batches.run_due_batch(
        app.state.database, waterfall=app.state.enrichment, box=app.state.secrets, clock=clock
    )
    other = await factory.account()
    hidden = await client.get(accepted["status_url"], headers=other.headers("full"))
    assert hidden.status_code == 404


# --- What a provider's error may show ---


async def test_an_adapters_error_message_is_masked_before_it_is_cut(app: FastAPI) -> None:
    """The net under any adapter (a third party's too) that quotes a provider: the key is blanked out
    in any case, URL-encoded or in base64, and only then is the message cut to its length."""
    key = "Sk_Live+Key/0123456789"
    basic = base64.b64encode(f"user:{key}".encode()).decode()
    messages = [
        f"provider says: bad key {key.upper()}",
        f"provider says: bad key {key.lower()} (retry)",
        "bad key in url ?api_key=" + quote(key, safe=""),
        f"bad credentials: Basic {basic}",
        "x" * (MESSAGE_CHARS - 6) + key,  # the cut would fall inside the key
        "y" * (MESSAGE_CHARS - 3) + key.swapcase(),
    ]
    for text in messages:

        async def send(text: str = text) -> None:
            raise ProviderError("provider_bad_response", text)

        async def reserve() -> bool:
            return True

        outcome = await app.state.enrichment.calls.call(
            provider="directory", base_url="https://directory.example", api_key=key, send=send, reserve=reserve
        )
        assert outcome.status == "error" and outcome.message is not None
        shown = outcome.message.lower()
        assert len(outcome.message) <= MESSAGE_CHARS
        for piece in ("sk_li", "0123", "%2b"):  # the key, also URL-encoded
            assert piece not in shown, (text, outcome.message)
        assert basic[12:24] not in outcome.message, (text, outcome.message)  # in base64


async def test_a_providers_error_text_never_reaches_the_customer(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, fakes: FakeProviders
) -> None:
    """Over the API: a provider answering an error that echoes the key gets a fixed reason and the
    status in the attempt, nothing of its own text."""
    account = await factory.account(credits=5)
    await store_keys(client, account, "hunter")
    contact_id = await acme(factory, app)
    fakes.hunter.fail_next(400, body=("x" * 190 + KEYS["hunter"].upper() + " and more").encode())
    result = await enrich(client, account, contact_id, providers=["hunter"], fields=["email"])
    [attempt] = result["attempts"]
    assert attempt["error"] == {"code": "provider_bad_response", "message": "Hunter answered HTTP 400"}
    assert "test-key" not in str(result).lower() and "xxxx" not in str(result)


async def test_stored_batch_results_that_quote_a_provider_are_cut_back(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    """Results stored before the body stopped being quoted (a piece of the key could be in them) keep
    only the fixed reason once the migration has run; other messages are left as they are."""
    import importlib.util

    path = Path(__file__).parents[2] / "src/vpx/migrations/versions/2026_11_29_enrichment_messages.py"
    spec = importlib.util.spec_from_file_location("enrichment_messages_migration", path)
    assert spec is not None and spec.loader is not None
    migration = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(migration)

    account = await factory.account()
    old = [
        ("hunter", 'Hunter refused the key (HTTP 401): {"errors": "bad key HUNTER-TEST-K'),
        ("pdl", "People Data Labs answered HTTP 400: invalid api_key pdl-test-k"),
        ("apollo", "Apollo failed (HTTP 503): upstream said: apollo-te"),
        ("hunter", "Hunter failed 5 times in a row; not called for another 30 s"),
    ]
    now = app.state.clock.now()
    async with app.state.database.write_sessions() as session, session.begin():
        session.add(EnrichmentBatch(id="ebt_old", account_id=account.id, status="completed", total=1, created_at=now))
        await session.flush()
        attempts = [
            {
                "provider": p,
                "status": "error",
                "fields": ["email"],
                "found": [],
                "duration_ms": 12.0,
                "error": {"code": "provider_bad_response", "message": m},
            }
            for p, m in old
        ]
        session.add(
            EnrichmentBatchItem(
                batch_id="ebt_old",
                position=0,
                contact_id="ct_1",
                status="not_found",
                result={"found": [], "attempts": attempts},
            )
        )
    for _ in range(2):  # a second run changes nothing
        async with app.state.database.write_engine.begin() as connection:
            await connection.run_sync(migration.scrub)
    response = await client.get("/api/v1/contacts/batch-enrich/ebt_old", headers=account.headers("full"))
    assert response.status_code == 200, response.text
    [item] = response.json()["items"]
    assert [a["error"]["message"] for a in item["attempts"]] == [
        "Hunter refused the key (HTTP 401)",
        "People Data Labs answered HTTP 400",
        "Apollo failed (HTTP 503)",
        "Hunter failed 5 times in a row; not called for another 30 s",
    ]
    assert "test-k" not in response.text.lower() and "apollo-te" not in response.text


async def test_refresh_asks_again_for_held_fields_and_keeps_the_replaced_value(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, fakes: FakeProviders, clock: FixedClock
) -> None:
    account = await factory.account()
    await store_keys(client, account, "pdl")
    contact_id = await acme(factory, app)
    first_time = clock.now()
    first = await enrich(client, account, contact_id, fields=["employee_count", "linkedin_url"])
    assert first["fields"]["employee_count"]["value"] == "42" and len(fakes.pdl.requests) == 1

    # Every requested field has a value now: a refresh still asks, and a new answer replaces it.
    fakes.pdl.companies[0].employee_count = 45
    later = first_time + timedelta(days=40)  # past the cache's 30 days: refresh is what asks again here
    clock.set(later)
    fresh = await enrich(client, account, contact_id, fields=["employee_count"], refresh=True)
    assert attempts(fresh)["pdl"] == ("found", None) and len(fakes.pdl.requests) == 2
    assert fresh["attempts"][0]["fields"] == ["employee_count"] and fresh["attempts"][0]["found"] == ["employee_count"]
    count = fresh["fields"]["employee_count"]
    assert count["value"] == "45" and count["provider"] == "pdl" and count["fetched_at"] == iso(later)
    assert count["previous"] == {
        "value": "42",
        "provider": "pdl",
        "provider_record_id": first["fields"]["employee_count"]["provider_record_id"],
        "fetched_at": iso(first_time),
        "confidence": first["fields"]["employee_count"]["confidence"],
    }
    # A field not asked for is left as it was.
    assert fresh["fields"]["linkedin_url"] == first["fields"]["linkedin_url"]

    # A provider that does not answer replaces nothing.
    fakes.pdl.fail_next(500)
    failed = await enrich(client, account, contact_id, fields=["employee_count"], refresh=True)
    assert attempts(failed)["pdl"] == ("error", "provider_unavailable")
    assert failed["fields"]["employee_count"] == count
    fakes.pdl.companies[0].employee_count = None
    missed = await enrich(client, account, contact_id, fields=["employee_count"], refresh=True)
    assert attempts(missed)["pdl"][0] in ("not_found", "found") and missed["fields"]["employee_count"] == count

    # The same value again from the same provider: newer, and the value it replaced is still the one kept.
    fakes.pdl.companies[0].employee_count = 45
    clock.set(later + timedelta(days=1))
    again = await enrich(client, account, contact_id, fields=["employee_count"], refresh=True)
    assert again["fields"]["employee_count"]["fetched_at"] == iso(later + timedelta(days=1))
    assert again["fields"]["employee_count"]["previous"] == count["previous"]
    held = await client.get(f"/api/v1/contacts/{contact_id}/enrichment", headers=account.headers("full"))
    assert held.json()["fields"] == again["fields"]

    # Without refresh, a held field is not missing: nothing is asked.
    before = len(fakes.pdl.requests)
    plain = await enrich(client, account, contact_id, fields=["employee_count"])
    assert attempts(plain)["pdl"] == ("skipped", "nothing_missing") and len(fakes.pdl.requests) == before


async def test_refresh_asks_again_for_a_decision_makers_fields(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, fakes: FakeProviders
) -> None:
    account = await factory.account()
    await store_keys(client, account, "pdl")
    contact_id = await acme(factory, app)
    first = await enrich(client, account, contact_id, fields=["decision_maker.email"])
    person = first["decision_makers"][0]
    assert person["fields"]["email"]["value"] == "maria@acmeplumbing.com"
    fakes.pdl.people[0].email = "maria.lopez@acmeplumbing.com"
    fresh = await enrich(client, account, contact_id, fields=["decision_maker.email"], refresh=True)
    assert attempts(fresh)["pdl"] == ("found", None)
    email = fresh["decision_makers"][0]["fields"]["email"]
    assert email["value"] == "maria.lopez@acmeplumbing.com"
    assert email["previous"]["value"] == "maria@acmeplumbing.com"


def iso(at: datetime) -> str:
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")
