"""A suppressed contact leaves search and previews (docs/decisions.md, "Opt-outs reach every buyer"):
the moment its entry commits, searches no longer find it (totals exact), its preview is a 404 to
anyone who did not reveal it, signals show no preview of it, and a reveal's 451 names the reason only
to an account that revealed it before. A contact added later with a suppressed phone or email is
covered from the start; one whose phone changes to a clean one comes back. Both databases; the
postings are checked against a rebuild from the table after the worker folds."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import update

from tests import factories
from tests.factories import Factory, details
from tests.signals.support import event, ingest
from vpx.contacts.search import postings
from vpx.models import Contact

pytestmark = pytest.mark.asyncio
HOT = {"budget": "$9k", "timeline": "Q1", "vendor_evaluation": ["A"]}


async def search(client: httpx.AsyncClient, account: factories.TestAccount, **params: Any) -> dict[str, Any]:
    response = await client.get("/api/v1/contacts/search", params=params, headers=account.headers())
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


async def fold_all(app: FastAPI) -> None:
    while await postings.fold_changes(app.state.database):
        pass


async def stored_postings(app: FastAPI) -> dict[str, set[int]]:
    async with app.state.database.read_sessions() as session:
        found = await postings.read_prefixed(session, "")
    return {term: set(bitmap) for term, bitmap in found.bitmaps.items() if bitmap}


async def rebuilt_postings(app: FastAPI) -> dict[str, set[int]]:
    async with app.state.database.read_sessions() as session:
        rows = list(await session.execute(postings._CONTACTS_FROM, {"low": 0, "high": 2**32}))
    built: dict[str, set[int]] = {}
    for _, bitmaps in postings.build_chunks(rows):
        for term, bitmap in bitmaps.items():
            built.setdefault(term, set()).update(bitmap)
    return built


async def test_a_suppressed_contact_leaves_search_and_previews(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    buyer, stranger = await factory.account(credits=50), await factory.account(credits=50)
    names = ["Quarry Lane Bakery", "Quarry Hill Bakery", "Quarry Point Bakery"]
    ids = [await factory.contact(business_name=n, **details(i)) for i, n in enumerate(names)]
    assert (await search(client, stranger, q="quarry bakery"))["total"] == 3
    assert (await client.post(f"/api/v1/contacts/{ids[0]}/reveal", headers=buyer.headers())).status_code == 200

    await factory.suppress("phone", details(0)["phone"], reason="opt_out")
    found = await search(client, stranger, q="quarry bakery")
    assert found["total"] == 2 and ids[0] not in {c["id"] for c in found["contacts"]}
    assert (await client.get(f"/api/v1/contacts/{ids[0]}", headers=stranger.headers())).status_code == 404
    # Its buyer still has it, marked, and hears why.
    mine = (await client.get(f"/api/v1/contacts/{ids[0]}", headers=buyer.headers())).json()
    assert mine["suppressed"]["reason"] == "opt_out" and mine["phone"] == details(0)["phone"]
    refused = await client.post(f"/api/v1/contacts/{ids[0]}/reveal", headers=buyer.headers())
    assert refused.status_code == 451 and "(opt_out)" in refused.json()["detail"]
    # Anyone else learns neither the name (no preview) nor the reason.
    hidden = await client.post(f"/api/v1/contacts/{ids[0]}/reveal", headers=stranger.headers())
    assert hidden.status_code == 451 and "opt_out" not in hidden.json()["detail"]
    assert names[0] not in hidden.text

    await fold_all(app)
    assert (await search(client, stranger, q="quarry bakery"))["total"] == 2
    assert await stored_postings(app) == await rebuilt_postings(app)


async def test_contacts_added_or_changed_later_are_covered_by_the_trigger(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    await factory.suppress("email", "Owner7@Shop7.example", reason="do_not_contact")
    await factory.suppress("contact", "ct_999999")  # covers nobody yet
    later = await factory.contact(business_name="Zircon Tile Works", **details(7))  # the suppressed email
    clean = await factory.contact(business_name="Zircon Tile Depot", **details(8))
    assert {c["id"] for c in (await search(client, account, q="zircon tile"))["contacts"]} == {clean}

    # The clean one takes the suppressed phone of another entry: it leaves; given a new one, back.
    await factory.suppress("phone", "+12025550999")
    number = int(clean.removeprefix("ct_"))
    for phone, expected in (("+12025550999", 0), ("+12025550998", 1)):
        async with app.state.database.write_sessions() as session, session.begin():
            await session.execute(update(Contact).where(Contact.id == number).values(phone=phone))
        assert (await search(client, account, q="zircon tile"))["total"] == expected
    # Still covered by its email, whatever its phone.
    assert (await client.get(f"/api/v1/contacts/{later}", headers=account.headers())).status_code == 404
    await fold_all(app)
    assert await stored_postings(app) == await rebuilt_postings(app)


async def test_signals_show_no_preview_of_a_suppressed_contact(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    contact = await factory.contact(**details(3))
    await ingest(app, [event(contact_id=contact, business=None, evidence=HOT)])
    [signal] = (await client.get("/api/v1/signals", headers=account.headers())).json()["signals"]
    assert signal["contact"]["id"] == contact
    await factory.suppress("contact", contact)
    [signal] = (await client.get("/api/v1/signals", headers=account.headers())).json()["signals"]
    assert signal["contact"] is None and signal["reveal_cost"] is None
