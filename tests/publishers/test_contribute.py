"""D17 contributions: each validation rule, duplicates in the batch and against the catalogue, the
1,000-row bound, accepted contacts searchable with source `contributed`, the publisher views."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.factories import Factory
from vpx.models import PossibleDuplicate

pytestmark = pytest.mark.asyncio
URL = "/api/v1/contacts/contribute"


def row(**fields: Any) -> dict[str, Any]:
    base = {
        "business_name": "Prairie Dental Care",
        "phone": "+1 303 555 0142",
        "city": "Boulder",
        "state": "co",
        "industry": "dental",
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


async def contribute(client: httpx.AsyncClient, headers: dict[str, str], rows: list[Any]) -> dict[str, Any]:
    response = await client.post(URL, json={"contacts": rows}, headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"business_name": ...}, "business_name", "required"),
        ({"business_name": "   "}, "business_name", "empty"),
        ({"business_name": "!!!"}, "business_name", "letters"),
        ({"business_name": "x" * 301}, "business_name", "at most"),
        ({"phone": ...}, "phone", "required"),
        ({"phone": "303 555 0142"}, "phone", "leading +"),
        ({"phone": "+1 555"}, "phone", "leading +"),
        ({"phone": "+1 000 000 0000"}, "phone", "leading +"),
        ({"phone": 13035550142}, "phone", "string"),
        ({"city": ...}, "city", "required"),
        ({"city": ""}, "city", "empty"),
        ({"state": "Colorado"}, "state", "state code"),
        ({"state": "ZZ"}, "state", "state code"),
        ({"industry": "mining"}, "industry", "46 verticals"),
        ({"industry": ...}, "industry", "required"),
        ({"email": "not-an-email"}, "email", "email"),
        ({"website": "x" * 301}, "website", "at most"),
        ({"colour": "red"}, "colour", "not a contributed-contact field"),
    ],
)
async def test_each_validation_rule(
    client: httpx.AsyncClient, factory: Factory, fields: dict[str, Any], field: str, words: str
) -> None:
    account = await factory.account()
    body = await contribute(
        client, account.headers(), [row(**fields), row(business_name="Fine Co", phone="+13035550199")]
    )
    bad, good = body["results"]
    assert bad["status"] == "rejected" and "contact_id" not in bad
    assert [e["field"] for e in bad["errors"]] == [f"contacts[0].{field}"]
    assert words in bad["errors"][0]["message"]
    assert good["status"] == "accepted" and body["counts"] == {"accepted": 1, "duplicate": 0, "rejected": 1}


async def test_a_row_reports_every_problem_and_non_objects_are_rejected(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    body = await contribute(client, account.headers(), [{"phone": "12", "state": "XX"}, "text", None, 5])
    fields = sorted(e["field"] for e in body["results"][0]["errors"])
    assert fields == [f"contacts[0].{f}" for f in ("business_name", "city", "industry", "phone", "state")]
    for index in (1, 2, 3):
        assert body["results"][index]["errors"] == [{"field": f"contacts[{index}]", "message": "must be an object"}]
    assert body["counts"] == {"accepted": 0, "duplicate": 0, "rejected": 4}


@pytest.mark.parametrize("body", [{"contacts": [row()] * 1001}, {"contacts": []}, {"contacts": {}}, {"rows": [row()]}])
async def test_request_bounds_are_422(client: httpx.AsyncClient, factory: Factory, body: dict[str, Any]) -> None:
    account = await factory.account()
    response = await client.post(URL, json=body, headers=account.headers())
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "invalid_parameters"
    mine = await client.get("/api/v1/publisher/contributions", headers=account.headers())
    assert mine.json()["contributions"] == []


async def test_1000_rows_are_accepted(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    rows = [row(business_name=f"Clinic {i}", phone=f"+1303555{i:04d}") for i in range(1000)]
    body = await contribute(client, account.headers(), rows)
    assert body["counts"]["accepted"] + body["counts"]["rejected"] == 1000  # some 555 numbers are not valid
    assert body["counts"]["duplicate"] == 0


async def test_duplicates_in_the_batch_and_against_the_catalogue(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    existing = await factory.contact(business_name="Acme Plumbing LLC", city="Denver", state="CO", phone="+13035550100")
    no_phone = await factory.contact(business_name="Zenith Electric", city="Denver", state="CO", phone=None)
    rows = [
        row(business_name="Other Name", phone="+1 (303) 555-0100"),  # catalogue phone
        row(business_name="ZENITH ELECTRIC, Inc.", city=" denver ", state="CO", phone="+13035550111"),  # catalogue name
        row(business_name="Peak Roofing", city="Aurora", phone="+13035550122"),
        row(business_name="Peak Roofing LLC", city="AURORA", phone="+13035550122"),  # same business as row 2
        row(business_name="Summit Roofing", city="Aurora", phone="+1.303.555.0122"),  # same phone as row 2
        row(business_name="Peak Roofing", city="Aurora", state="NE", phone="+13035550144"),  # other state: new
    ]
    body = await contribute(client, account.headers(), rows)
    statuses = [(r["status"], r.get("contact_id"), r.get("duplicate_of_index")) for r in body["results"]]
    new = body["results"][2]["contact_id"]
    # D17: catalogue contacts this account neither contributed nor revealed are not named.
    assert (
        existing
        and no_phone
        and statuses
        == [
            ("duplicate", None, None),
            ("duplicate", None, None),
            ("accepted", new, None),
            ("duplicate", new, 2),
            ("duplicate", new, 2),
            ("accepted", body["results"][5]["contact_id"], None),
        ]
    )
    again = await contribute(
        client, account.headers(), [row(business_name="Peak Roofing", city="Aurora", phone="+13035550122")]
    )
    assert again["results"][0]["status"] == "duplicate" and again["results"][0]["contact_id"] == new


async def test_the_same_name_with_another_phone_is_accepted_and_listed_as_a_possible_duplicate(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    account = await factory.account()
    existing = await factory.contact(business_name="Acme Plumbing LLC", city="Denver", state="CO", phone="+13035550100")
    rows = [
        row(business_name="ACME PLUMBING, Inc.", city="Denver", phone="+13035550111"),  # another phone: a veto
        row(business_name="Acme Plumbing", city="Denver", phone="+13035550122"),  # and another
    ]
    body = await contribute(client, account.headers(), rows)
    assert [r["status"] for r in body["results"]] == ["accepted", "accepted"]
    first, second = (int(r["contact_id"].removeprefix("ct_")) for r in body["results"])
    async with app.state.database.read_sessions() as session:
        pairs = {(p.contact_id, p.other_contact_id, p.reason) for p in await session.scalars(select(PossibleDuplicate))}
    mine = int(existing.removeprefix("ct_"))
    # Each held-apart row is paired with the business's first contact, not with every other row.
    assert pairs == {(mine, first, "phone"), (mine, second, "phone")}


async def test_accepted_contacts_are_searchable_with_source_contributed(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    publisher, buyer = await factory.account(), await factory.account()
    body = await contribute(
        client,
        publisher.headers(),
        [row(business_name="Zephyr Orthodontics", email="Hello@Zephyr.example", website="zephyr.example")],
    )
    contact_id = body["results"][0]["contact_id"]
    found = (await client.get("/api/v1/contacts/search?q=zephyr", headers=buyer.headers("ro"))).json()
    assert [c["id"] for c in found["contacts"]] == [contact_id]
    revealed = (await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=buyer.headers())).json()
    assert revealed["phone"] == "+13035550142" and revealed["address"]["state"] == "CO"
    assert revealed["email"] == "hello@zephyr.example"
    assert [s["registry"] for s in revealed["sources"]] == ["contributed"]


async def test_contributions_page_and_idempotency(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    headers = {**account.headers(), "Idempotency-Key": "contrib-1"}
    rows = [row(business_name=f"Dent {i}", phone=f"+1720555{i:04d}") for i in range(100, 103)]
    first = await client.post(URL, json={"contacts": rows}, headers=headers)
    again = await client.post(URL, json={"contacts": rows}, headers=headers)
    assert first.json() == again.json() and first.json()["counts"]["accepted"] == 3
    page = (await client.get("/api/v1/publisher/contributions?limit=2", headers=account.headers())).json()
    assert [c["business_name"] for c in page["contributions"]] == ["Dent 102", "Dent 101"]
    rest = (
        await client.get(f"/api/v1/publisher/contributions?cursor={page['next_cursor']}", headers=account.headers())
    ).json()
    assert [c["business_name"] for c in rest["contributions"]] == ["Dent 100"] and rest["next_cursor"] is None
    assert page["contributions"][0]["paid_reveals"] == 0 and page["contributions"][0]["earned"] == 0
