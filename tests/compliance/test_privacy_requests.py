"""Privacy requests: public and limited per address; an opt-out at once; access and deletion verified
by the data points that match the record (which ones, kept); one that cannot be verified applied as an
opt-out; the operator's answers through the admin API; the yearly figures; records kept 24 months."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests.compliance.fake_drop import FakeDrop
from tests.compliance.support import audit_kinds, chain_ok, contact, pull, report
from tests.conftest import asgi_client, test_settings, wipe
from tests.factories import Factory, details
from vpx.app import create_app
from vpx.clock import FixedClock
from vpx.compliance.erasure import TOMBSTONE
from vpx.compliance.hashing import email_hash
from vpx.compliance.privacy import metrics, service

pytestmark = pytest.mark.asyncio
ADMIN = {"X-Admin-Token": "operator-token-0123456789"}
PERSON = {"business_name": "Pat Doe Therapy", "postal_code": "20001", **details(50)}


@pytest.fixture
def settings(database_url: str, drop: FakeDrop) -> Any:
    return test_settings(
        database_url,
        admin_token=ADMIN["X-Admin-Token"],
        drop_url=drop.base_url,
        drop_api_key="drop-test-key-0123456789",
        drop_broker_id="4821",
    )


async def ask(client: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    answer = await client.post("/api/v1/privacy-requests", json=body)
    assert answer.status_code == 202, answer.text
    found: dict[str, Any] = answer.json()
    return found


async def seen(client: httpx.AsyncClient, request_id: str) -> dict[str, Any]:
    answer = await client.get(f"/api/v1/admin/privacy-requests/{request_id}", headers=ADMIN)
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


async def test_an_opt_out_takes_effect_at_once_without_verification(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    person = await factory.contact(**PERSON)
    received = await ask(client, type="opt_out", email=PERSON["email"].upper())
    assert received["status"] == "fulfilled" and received["id"].startswith("pr_")
    assert datetime.fromisoformat(received["expected_by"]) == app.state.clock.now() + timedelta(days=45)
    assert (await contact(app, person)).suppressed
    account = await factory.account(credits=10)
    assert (await client.post(f"/api/v1/contacts/{person}/reveal", headers=account.headers())).status_code == 451
    shown = await seen(client, received["id"])
    assert shown["verification"]["verified"] is False and shown["decided_by"] == "rule:opt_out"
    assert (await contact(app, person)).email == PERSON["email"]  # an opt-out deletes nothing


async def test_a_deletion_verified_by_two_data_points_erases_the_record_when_fulfilled(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    person = await factory.contact(**PERSON)
    received = await ask(client, type="deletion", email=PERSON["email"], postal_code="20001-1234", name="pat doe")
    assert received["status"] == "open"
    shown = await seen(client, received["id"])
    assert shown["verification"] == {
        "verified": True,
        "matched": ["email", "name", "postal_code"],
        "contacts": [person],
        "handled_as": None,
    }
    assert not (await contact(app, person)).suppressed  # decided by the operator, not yet done
    done = await client.post(f"/api/v1/admin/privacy-requests/{received['id']}/fulfil", json={}, headers=ADMIN)
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "fulfilled" and done.json()["resolution"]["contacts_erased"] == 1
    erased = await contact(app, person)
    assert erased.business_name == TOMBSTONE and erased.email is None
    again = await client.post(f"/api/v1/admin/privacy-requests/{received['id']}/fulfil", json={}, headers=ADMIN)
    assert again.status_code == 409
    # The person stays deleted: a record imported later with that email is erased as it is written.
    later = await factory.contact(business_name="Pat Doe Therapy LLC", email=PERSON["email"].upper())
    assert (await contact(app, later)).business_name == TOMBSTONE
    assert [k for k in await audit_kinds(app) if k.startswith("privacy.")] == ["privacy.received", "privacy.fulfilled"]


async def test_a_request_that_cannot_be_verified_is_applied_as_an_opt_out(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    person = await factory.contact(**PERSON)
    received = await ask(client, type="deletion", phone=PERSON["phone"], name="Somebody Else")
    shown = await seen(client, received["id"])
    assert shown["verification"]["verified"] is False and shown["verification"]["matched"] == ["phone"]
    assert shown["verification"]["handled_as"] == "opt_out"
    assert (await contact(app, person)).suppressed
    refused = await client.post(f"/api/v1/admin/privacy-requests/{received['id']}/fulfil", json={}, headers=ADMIN)
    assert refused.status_code == 409 and "insuf_verification" in refused.json()["detail"]
    denied = await client.post(
        f"/api/v1/admin/privacy-requests/{received['id']}/deny",
        json={"reason": "insuf_verification", "note": "no second detail"},
        headers=ADMIN,
    )
    assert denied.json()["status"] == "denied" and denied.json()["deny_reason"] == "insuf_verification"


async def test_an_access_request_reports_what_is_held_and_who_bought_it_by_count_and_date(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, clock: FixedClock
) -> None:
    person = await factory.contact(**PERSON)
    for days in (0, 3):
        clock.set(clock.now() + timedelta(days=days))
        buyer = await factory.account(credits=10, name="Secret Buyer Inc")
        assert (await client.post(f"/api/v1/contacts/{person}/reveal", headers=buyer.headers())).status_code == 200
    received = await ask(client, type="access", email=PERSON["email"], phone=PERSON["phone"], postal_code="20001")
    done = await client.post(f"/api/v1/admin/privacy-requests/{received['id']}/fulfil", json={}, headers=ADMIN)
    [record] = done.json()["resolution"]["records"]
    assert done.json()["resolution"]["detail"] == "specific"  # three data points matched
    assert record["fields"]["email"] == PERSON["email"] and record["fields"]["street"] == PERSON["street"]
    assert record["bought"] == {"accounts": 2, "dates": ["2026-11-15", "2026-11-18"]}
    assert "Secret Buyer" not in done.text
    # Two data points: the categories held, not the values.
    categories = await ask(client, type="access", email=PERSON["email"], postal_code="20001")
    done = await client.post(f"/api/v1/admin/privacy-requests/{categories['id']}/fulfil", json={}, headers=ADMIN)
    [record] = done.json()["resolution"]["records"]
    assert done.json()["resolution"]["detail"] == "categories" and "email" in record["fields"]
    # The values are not in the report (the request's own data points are the person's to see).
    assert PERSON["email"] not in json.dumps(done.json()["resolution"])
    assert PERSON["street"] not in done.text


async def test_requests_are_public_limited_checked_and_listed_for_the_operator(
    database_url: str, clock: FixedClock
) -> None:
    app = create_app(
        test_settings(database_url, admin_token=ADMIN["X-Admin-Token"], privacy_request_rate_limit="2/hour"),
        clock=clock,
    )
    await wipe(app.state.database)
    try:
        async with asgi_client(app, client_ip="192.0.2.7") as client:
            nothing = await client.post("/api/v1/privacy-requests", json={"type": "access", "name": "Pat"})
            assert nothing.status_code == 422 and "email, a phone or an NPI" in nothing.text
            wrong = await client.post("/api/v1/privacy-requests", json={"type": "forget", "email": "a@b.example"})
            assert wrong.status_code == 422
            for _ in range(2):
                await ask(client, type="opt_out", email="someone@example.com")
            limited = await client.post("/api/v1/privacy-requests", json={"type": "opt_out", "email": "x@example.com"})
            assert limited.status_code == 429 and "Retry-After" in limited.headers
            assert (await client.get("/api/v1/admin/privacy-requests")).status_code == 401
            listed = await client.get("/api/v1/admin/privacy-requests", params={"status": "fulfilled"}, headers=ADMIN)
            assert [r["type"] for r in listed.json()["requests"]] == ["opt_out", "opt_out"]
            assert (await client.get("/api/v1/admin/privacy-requests/pr_nope", headers=ADMIN)).status_code == 404
    finally:
        await app.state.database.dispose()


async def test_yearly_figures_keep_drop_and_direct_requests_apart(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, clock: FixedClock, drop: FakeDrop
) -> None:
    person = await factory.contact(**PERSON)
    opted = await ask(client, type="opt_out", email="a@example.com")
    deletion = await ask(client, type="deletion", email=PERSON["email"], postal_code="20001")
    unverified = await ask(client, type="access", email="nobody@example.com")
    clock.set(clock.now() + timedelta(days=4))
    await client.post(f"/api/v1/admin/privacy-requests/{deletion['id']}/fulfil", json={}, headers=ADMIN)
    clock.set(clock.now() + timedelta(days=2))
    await client.post(
        f"/api/v1/admin/privacy-requests/{unverified['id']}/deny", json={"reason": "no_match"}, headers=ADMIN
    )
    drop.offer(
        {"Email": [("YearItem0001", email_hash("x@example.com")), ("YearItem0002", email_hash(PERSON["email"]))]}
    )
    await pull(app, drop)
    clock.set(clock.now() + timedelta(days=10))
    await report(app, drop)
    async with app.state.database.read_sessions() as session:
        figures = await metrics.yearly(session, year=2026)
    direct = figures["direct"]
    assert (direct["opt_out"]["received"], direct["opt_out"]["complied"], direct["opt_out"]["mean_days"]) == (1, 1, 0.0)
    assert (direct["deletion"]["complied"], direct["deletion"]["median_days"]) == (1, 4.0)
    assert direct["access"]["denied_by_reason"] == {"no_match": 1}
    assert figures["drop"] == {
        "received": 2, "complied": 0, "deleted": 0, "opted_out": 0, "denied": 0, "denied_by_reason": {},
        "not_found": 2, "open": 0, "mean_days": 10.0, "median_days": 10.0,
    }  # fmt: skip
    assert opted["status"] == "fulfilled" and person
    async with app.state.database.read_sessions() as session:
        assert (await metrics.yearly(session, year=2025))["drop"]["received"] == 0
    assert (await chain_ok(app)).ok


async def test_records_are_kept_24_months_then_deleted(app: FastAPI, client: httpx.AsyncClient) -> None:
    received = await ask(client, type="opt_out", email="old@example.com")
    later = service.shift_months(app.state.clock.now(), 24)
    async with app.state.database.write_sessions() as session, session.begin():
        assert await service.purge_expired(session, now=later) == 0
        assert await service.purge_expired(session, now=later + timedelta(seconds=1)) == 1
    assert (await client.get(f"/api/v1/admin/privacy-requests/{received['id']}", headers=ADMIN)).status_code == 404
    assert "privacy.purged" in await audit_kinds(app)
    assert service.shift_months(datetime(2026, 8, 31, tzinfo=UTC), 6) == datetime(2027, 2, 28, tzinfo=UTC)
