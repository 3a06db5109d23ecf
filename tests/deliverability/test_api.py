"""Deliverability in the API on both databases: revealed contacts carry the status, flags and check
time (reveal, batch reveal, GET once revealed); previews carry only the two booleans; search and the
export filter by status, exactly, as statuses change; a bad status is a 422."""

from __future__ import annotations

import csv
import io
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import update

from tests import factories
from tests.conftest import test_settings
from tests.factories import Factory
from tests.visitors.dns_server import DnsServer
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.contacts.search import postings
from vpx.deliverability.service import EmailChecks, mark_bounced
from vpx.models import Contact

PREVIEW_KEYS = {
    "id",
    "business_name",
    "city",
    "state",
    "industry",
    "preview",
    "reveal_cost",
    "has_phone",
    "has_email",
    "has_website",
    "has_address",
    "email_deliverable",
}


@pytest.fixture
def settings(database_url: str, dns_server: DnsServer) -> Settings:
    return test_settings(
        database_url,
        dns_servers=f"{dns_server.host}:{dns_server.port}",
        dns_timeout_seconds=0.4,
        mx_lookups_per_second=500,
        worker_in_process=False,
        webhook_allow_private=True,
    )


async def check_all(app: FastAPI, clock: FixedClock) -> None:
    checks = EmailChecks.from_settings(app.state.database, app.state.settings, clock=clock)
    while await checks.run_round():
        pass


async def catalogue(factory: Factory, dns_server: DnsServer) -> dict[str, str]:
    """Contacts named after what their email turns out to be."""
    dns_server.add_mx("acme.example", 10, "mx.acme.example")
    dns_server.add_mx("parked.example", 0, ".")
    emails = {
        "deliverable": "owner@acme.example",
        "role": "info@acme.example",
        "no_mx": "owner@parked.example",
        "bounced": "jane@acme.example",
        "malformed": "owner@@acme.example",
        "none": None,
    }
    return {
        name: await factory.contact(business_name=f"Dental {name}", email=email, phone=None, industry="dental")
        for name, email in emails.items()
    }


async def search(client: httpx.AsyncClient, account: factories.TestAccount, **params: Any) -> dict[str, Any]:
    response = await client.get("/api/v1/contacts/search", params=params, headers=account.headers("ro"))
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


async def test_a_revealed_contact_carries_its_emails_status_flags_and_check_time(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, dns_server: DnsServer, clock: FixedClock
) -> None:
    ids = await catalogue(factory, dns_server)
    await check_all(app, clock)
    account = await factory.account(credits=20)
    revealed = await client.post(f"/api/v1/contacts/{ids['role']}/reveal", headers=account.headers())
    assert revealed.status_code == 200, revealed.text
    checked_at = clock.now().isoformat().replace("+00:00", "Z")
    body = revealed.json()
    assert (body["email"], body["email_status"], body["email_flags"]) == ("info@acme.example", "mx_found", ["role"])
    assert body["email_checked_at"] in (checked_at, clock.now().isoformat())

    shown = (await client.get(f"/api/v1/contacts/{ids['role']}", headers=account.headers())).json()
    assert (shown["email_status"], shown["email_flags"], shown["email_checked_at"]) == (
        "mx_found",
        ["role"],
        body["email_checked_at"],
    )

    batch = await client.post(
        "/api/v1/contacts/batch-reveal",
        json={"contact_ids": [ids["no_mx"], ids["none"], ids["malformed"]]},
        headers=account.headers(),
    )
    assert batch.status_code == 200, batch.text
    contacts = {r["contact_id"]: r["contact"] for r in batch.json()["results"]}
    assert (contacts[ids["no_mx"]]["email_status"], contacts[ids["no_mx"]]["email_flags"]) == ("no_mx", [])
    assert contacts[ids["malformed"]]["email_status"] == "invalid_syntax"
    assert {k: contacts[ids["none"]][k] for k in ("email", "email_status", "email_flags", "email_checked_at")} == {
        "email": None,
        "email_status": None,
        "email_flags": [],
        "email_checked_at": None,
    }


async def test_previews_show_only_whether_there_is_a_deliverable_email(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, dns_server: DnsServer, clock: FixedClock
) -> None:
    ids = await catalogue(factory, dns_server)
    account = await factory.account()
    unchecked = (await client.get(f"/api/v1/contacts/{ids['deliverable']}", headers=account.headers("ro"))).json()
    assert set(unchecked) == PREVIEW_KEYS
    assert (unchecked["has_email"], unchecked["email_deliverable"]) == (True, False)

    await check_all(app, clock)
    async with app.state.database.write_sessions() as session, session.begin():
        assert await mark_bounced(session, int(ids["bounced"].removeprefix("ct_")), clock.now())
    found = await search(client, account, q="dental", limit=100)
    assert found["total"] == len(ids)
    previews = {c["id"]: c for c in found["contacts"]}
    assert all(set(preview) == PREVIEW_KEYS for preview in previews.values())
    assert {name: (previews[i]["has_email"], previews[i]["email_deliverable"]) for name, i in ids.items()} == {
        "deliverable": (True, True),
        "role": (True, True),
        "no_mx": (True, False),
        "bounced": (True, False),
        "malformed": (True, False),
        "none": (False, False),
    }
    single = (await client.get(f"/api/v1/contacts/{ids['deliverable']}", headers=account.headers("ro"))).json()
    assert set(single) == PREVIEW_KEYS and single["email_deliverable"] is True


async def test_search_filters_by_email_status_exactly_as_statuses_change(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, dns_server: DnsServer, clock: FixedClock
) -> None:
    ids = await catalogue(factory, dns_server)
    account = await factory.account()

    async def matching(status: str, **params: Any) -> set[str]:
        found = await search(client, account, email_status=status, limit=100, **params)
        assert found["total"] == len(found["contacts"])
        return {c["id"] for c in found["contacts"]}

    # Before any check every email is unknown; a contact without one has no status at all.
    assert await matching("unknown") == set(ids.values()) - {ids["none"]}
    assert await matching("mx_found") == set()

    await check_all(app, clock)
    assert await matching("mx_found") == {ids["deliverable"], ids["role"], ids["bounced"]}
    await postings.fold_changes(app.state.database)  # the worker's fold: the same answer from the postings
    assert await matching("mx_found") == {ids["deliverable"], ids["role"], ids["bounced"]}
    assert await matching("no_mx") == {ids["no_mx"]}
    assert await matching("invalid_syntax") == {ids["malformed"]}
    assert await matching("unknown") == set()

    async with app.state.database.write_sessions() as session, session.begin():
        assert await mark_bounced(session, int(ids["bounced"].removeprefix("ct_")), clock.now())
        # A contact that loses its email loses its status with it.
        await session.execute(
            update(Contact).where(Contact.id == int(ids["no_mx"].removeprefix("ct_"))).values(email=None)
        )
    assert await matching("bounced") == {ids["bounced"]}
    assert await matching("mx_found") == {ids["deliverable"], ids["role"]}
    assert await matching("no_mx") == set()
    # With words and other filters, and in the POST form.
    assert await matching("mx_found", q="dental role", state="CO") == {ids["role"]}
    posted = await client.post(
        "/api/v1/contacts/search",
        json={"query": "dental", "email_status": "mx_found", "industry": "dental"},
        headers=account.headers("ro"),
    )
    assert posted.status_code == 200 and posted.json()["total"] == 2


@pytest.mark.parametrize("value", ["MX_FOUND", "valid", "deliverable", "x" * 300])
async def test_an_unknown_email_status_is_refused(client: httpx.AsyncClient, factory: Factory, value: str) -> None:
    account = await factory.account()
    response = await client.get(
        "/api/v1/contacts/search", params={"email_status": value}, headers=account.headers("ro")
    )
    assert response.status_code == 422
    problem = response.json()
    assert problem["code"] == "invalid_parameters"
    assert [e["field"] for e in problem["errors"]] == ["email_status"]
    posted = await client.post("/api/v1/contacts/search", json={"email_status": value}, headers=account.headers("ro"))
    assert posted.status_code == 422 and posted.json()["code"] == "invalid_parameters"


async def test_the_export_of_revealed_contacts_filters_by_email_status(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, dns_server: DnsServer, clock: FixedClock
) -> None:
    ids = await catalogue(factory, dns_server)
    await check_all(app, clock)
    account = await factory.account(credits=20)
    for contact_id in ids.values():
        assert (
            await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=account.headers())
        ).status_code == 200
    response = await client.get(
        "/api/v1/exports/contacts.csv", params={"email_status": "mx_found"}, headers=account.headers()
    )
    assert response.status_code == 200, response.text
    rows = list(csv.DictReader(io.StringIO(response.text)))
    assert sorted(row["id"] for row in rows) == sorted([ids["deliverable"], ids["role"], ids["bounced"]])
    bad = await client.get("/api/v1/exports/contacts.csv", params={"email_status": "nope"}, headers=account.headers())
    assert bad.status_code == 422
