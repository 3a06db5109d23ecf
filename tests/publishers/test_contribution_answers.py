"""D17: what a contribution's answer tells. A duplicate names the catalogue contact it repeats only to
an account that contributed or revealed it, so contributing is no free look-up of who has a phone,
an email or a website; deactivated contacts are no duplicates and are never named."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, update

from tests.factories import Factory
from tests.publishers.test_contribute import URL, contribute, row
from vpx.models import Contact, PossibleDuplicate

pytestmark = pytest.mark.asyncio


def shown(body: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(r["status"], r.get("contact_id")) for r in body["results"]]


async def set_status(app: FastAPI, contact_id: str, status: str, **values: Any) -> None:
    async with app.state.database.write_sessions() as session, session.begin():
        await session.execute(
            update(Contact).where(Contact.id == int(contact_id.removeprefix("ct_"))).values(status=status, **values)
        )


async def test_a_phone_sweep_learns_no_contact_ids(client: httpx.AsyncClient, factory: Factory) -> None:
    """Rows with made-up names and the catalogue's phones, or its businesses with made-up phones: each
    is a duplicate, and none says which contact it repeats."""
    account = await factory.account()
    phones = [f"+1303555{n:04d}" for n in range(120, 130)]
    await factory.contacts(
        [
            {"business_name": f"Registry Clinic {n}", "city": "Denver", "state": "CO", "industry": "dental", "phone": p}
            for n, p in enumerate(phones)
        ]
    )
    sweep = [row(business_name=f"Guess {n}", phone=phone) for n, phone in enumerate(phones)]
    sweep += [row(business_name="Registry Clinic 3", city="Denver", state="CO", phone="+13035550123")]
    body = await contribute(client, account.headers(), sweep)
    assert shown(body) == [("duplicate", None)] * 11
    assert all(set(r) == {"index", "status"} for r in body["results"])


async def test_a_duplicate_names_a_contact_the_account_revealed(client: httpx.AsyncClient, factory: Factory) -> None:
    account, other = await factory.account(), await factory.account()
    known = await factory.contact(business_name="Gomez Plumbing", phone="+13035550140", website=None, street=None)
    unknown = await factory.contact(business_name="Pike Electric", phone="+13035550141", website=None, street=None)
    revealed = await client.post(f"/api/v1/contacts/{known}/reveal", headers=account.headers())
    assert revealed.status_code == 200, revealed.text
    rows = [
        row(business_name="Anything", phone="+13035550140"),  # its phone
        row(business_name="Gomez Plumbing LLC", city="Denver", state="CO", phone="+13035550140"),  # its business
        row(business_name="Anything Else", phone="+13035550141"),  # a contact it did not reveal
    ]
    assert shown(await contribute(client, account.headers(), rows)) == [
        ("duplicate", known),
        ("duplicate", known),
        ("duplicate", None),
    ]
    # The same rows from an account that revealed neither name neither.
    assert shown(await contribute(client, other.headers(), rows)) == [("duplicate", None)] * 3
    assert unknown not in {c for _, c in shown(await contribute(client, account.headers(), rows[2:]))}


async def test_a_duplicate_names_a_contact_the_account_contributed_and_no_one_elses(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    publisher, rival = await factory.account(), await factory.account()
    first = await contribute(client, publisher.headers(), [row(business_name="Zephyr Dental", phone="+13035550150")])
    (_, mine) = shown(first)[0]
    again = [row(business_name="Zephyr Dental", phone="+13035550150"), row(business_name="Z", phone="+13035550150")]
    assert shown(await contribute(client, publisher.headers(), again)) == [("duplicate", mine), ("duplicate", mine)]
    assert shown(await contribute(client, rival.headers(), again)) == [("duplicate", None), ("duplicate", None)]


async def test_rows_sharing_only_an_email_or_a_website_with_a_contact_are_accepted_as_new(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    existing = await factory.contact(
        business_name="Acme Plumbing", email="owner@acme.example", website="https://acme.example", phone="+13035550160"
    )
    rows = [
        row(business_name="Someone Else", phone="+13035550161", email="owner@acme.example"),
        row(business_name="Another One", phone="+13035550162", website="acme.example"),
    ]
    body = await contribute(client, account.headers(), rows)
    statuses = shown(body)
    assert [s for s, _ in statuses] == ["accepted", "accepted"]
    assert existing not in {c for _, c in statuses}


async def test_a_deactivated_contact_is_no_duplicate_and_is_never_named(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    account = await factory.account()
    gone = await factory.contact(business_name="Old Mill Bakery", phone="+13035550170", website=None, street=None)
    await client.post(f"/api/v1/contacts/{gone}/reveal", headers=account.headers())
    await factory.deactivate(gone)
    rows = [
        row(business_name="Old Mill Bakery", city="Denver", state="CO", phone="+13035550170"),
        row(business_name="Old Mill Bakery", city="Denver", state="CO", phone="+1 303 555 0170"),
    ]
    body = await contribute(client, account.headers(), rows)
    # Accepted as a new contact (the business came back); the second row repeats the first.
    (status, new), (again, same) = shown(body)
    assert (status, again) == ("accepted", "duplicate") and new != gone and same == new
    assert body["results"][1]["duplicate_of_index"] == 0
    async with app.state.database.read_sessions() as session:
        assert list(await session.scalars(select(PossibleDuplicate))) == []


async def test_a_merged_contact_is_a_duplicate_never_named(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    account = await factory.account()
    body = await contribute(client, account.headers(), [row(business_name="Twin Peaks Dental", phone="+13035550180")])
    contributed = body["results"][0]["contact_id"]
    await set_status(app, contributed, "merged")
    again = await contribute(client, account.headers(), [row(business_name="Twin Peaks Dental", phone="+13035550180")])
    assert shown(again) == [("duplicate", None)]


async def test_counts_stay_as_before(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    await factory.contact(business_name="Counted Co", phone="+13035550190")
    response = await client.post(
        URL,
        json={"contacts": [row(business_name="X", phone="+13035550190"), row(phone="12"), row(phone="+13035550191")]},
        headers=account.headers(),
    )
    assert response.status_code == 200
    assert response.json()["counts"] == {"accepted": 1, "duplicate": 1, "rejected": 1}
