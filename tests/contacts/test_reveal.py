"""Reveals: D9 price, D10 charge once, D11 ledger, D14 record, D15 suppression, D2 errors."""

from __future__ import annotations

import httpx
import pytest

from tests.factories import Factory, details


async def balance(client: httpx.AsyncClient, headers: dict[str, str]) -> float:
    return float((await client.get("/api/v1/account", headers=headers)).json()["balance"]["total"])


async def test_reveal_returns_full_details_and_charges_one_credit(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    contact = await factory.contact()
    response = await client.post("/api/v1/contacts/reveal", json={"contact_id": contact}, headers=account.headers())
    assert response.status_code == 200
    assert response.headers["X-Credits-Charged"] == "1"
    assert response.headers["X-Credits-Remaining"] == "24"
    body = response.json()
    assert body["preview"] is False
    assert body["phone"] == "+13035550100"
    assert body["email"] == "info@acmeplumbing.example"
    assert body["website"] == "https://acmeplumbing.example"
    assert body["address"] == {
        "street": "1 Main St",
        "city": "Denver",
        "state": "CO",
        "postal_code": "80202",
        "country": "US",
    }
    assert body["license"] == {"type": "C-36 Plumbing Contractor", "number": "CO-123", "state": "CO"}
    assert body["sources"][0]["registry"] == "registry"
    assert body["credits_charged"] == 1 and body["credits_remaining"] == 24


@pytest.mark.parametrize(("level", "price"), [(None, 1), ("cold", 1), ("warm", 3), ("hot", 6)])
async def test_price_follows_the_highest_intent_tier(
    client: httpx.AsyncClient, factory: Factory, level: str | None, price: int
) -> None:
    account = await factory.account()
    contact = await factory.contact()
    await factory.set_intent(contact, level)
    preview = (await client.get(f"/api/v1/contacts/{contact}", headers=account.headers())).json()
    assert preview["preview"] is True and preview["reveal_cost"] == price
    response = await client.post(f"/api/v1/contacts/{contact}/reveal", headers=account.headers())
    assert response.json()["credits_charged"] == price
    assert await balance(client, account.headers()) == 25 - price


async def test_second_reveal_is_free(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    contact = await factory.contact()
    first = await client.post(f"/api/v1/contacts/{contact}/reveal", headers=account.headers())
    second = await client.post("/api/v1/contacts/reveal", json={"contact_id": contact}, headers=account.headers("full"))
    assert first.json()["credits_charged"] == 1
    assert second.status_code == 200 and second.json()["credits_charged"] == 0
    assert second.headers["X-Credits-Charged"] == "0"
    assert second.json()["phone"] == first.json()["phone"]
    assert await balance(client, account.headers()) == 24
    ledger = (await client.get("/api/v1/account/ledger", headers=account.headers())).json()["entries"]
    assert [e["kind"] for e in ledger] == ["reveal", "free_monthly"]


async def test_each_account_pays_for_its_own_reveal(client: httpx.AsyncClient, factory: Factory) -> None:
    one, two = await factory.account(), await factory.account()
    contact = await factory.contact()
    for account in (one, two):
        response = await client.post(f"/api/v1/contacts/{contact}/reveal", headers=account.headers())
        assert response.json()["credits_charged"] == 1


async def test_get_contact_shows_full_record_only_to_the_account_that_revealed_it(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    buyer, other = await factory.account(), await factory.account()
    contact = await factory.contact()
    await client.post(f"/api/v1/contacts/{contact}/reveal", headers=buyer.headers())
    mine = (await client.get(f"/api/v1/contacts/{contact}", headers=buyer.headers("ro"))).json()
    theirs = (await client.get(f"/api/v1/contacts/{contact}", headers=other.headers("ro"))).json()
    assert mine["preview"] is False and mine["phone"] == "+13035550100"
    assert theirs["preview"] is True and "phone" not in theirs


@pytest.mark.parametrize("kind", ["contact", "phone", "email"])
async def test_suppressed_reveal_is_451_and_charges_nothing(
    client: httpx.AsyncClient, factory: Factory, kind: str
) -> None:
    account = await factory.account()
    contact = await factory.contact()
    value = {"contact": contact, "phone": "+1 (303) 555-0100", "email": "INFO@acmeplumbing.example"}[kind]
    await factory.suppress(kind, value, reason="fcra")
    response = await client.post(f"/api/v1/contacts/{contact}/reveal", headers=account.headers())
    assert response.status_code == 451
    assert response.json()["code"] == "suppressed"
    assert "phone" not in response.text and "+1303" not in response.text
    assert await balance(client, account.headers()) == 25
    ledger = (await client.get("/api/v1/account/ledger", headers=account.headers())).json()["entries"]
    assert [e["kind"] for e in ledger] == ["free_monthly"]


async def test_suppression_hit_is_audited(client: httpx.AsyncClient, factory: Factory) -> None:
    from sqlalchemy import func, select

    from vpx.models import SuppressionHit

    account = await factory.account()
    contact = await factory.contact()
    await factory.suppress("contact", contact)
    await client.post(f"/api/v1/contacts/{contact}/reveal", headers=account.headers())
    async with factory.database.read_sessions() as session:
        assert await session.scalar(select(func.count()).select_from(SuppressionHit)) == 1


async def test_unknown_contact_is_404(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    for contact_id in ("ct_999999", "ct_abc", "nope", "ct_", "ct_-1", "ct_99999999999999999999"):
        response = await client.post(
            "/api/v1/contacts/reveal", json={"contact_id": contact_id}, headers=account.headers()
        )
        assert response.status_code == 404, contact_id
        assert response.json()["code"] == "not_found"
        assert (await client.get(f"/api/v1/contacts/{contact_id}", headers=account.headers())).status_code == 404
    assert await balance(client, account.headers()) == 25


async def test_no_credits_is_402_and_nothing_changes(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    contact = await factory.contact()
    await factory.set_intent(contact, "hot")
    cheap = [await factory.contact(business_name=f"Cheap {i}", **details(i)) for i in range(22)]
    for contact_id in cheap:
        assert (
            await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=account.headers())
        ).status_code == 200
    response = await client.post(f"/api/v1/contacts/{contact}/reveal", headers=account.headers())
    assert response.status_code == 402
    assert response.json()["code"] == "insufficient_credits"
    assert response.headers["X-Credits-Remaining"] == "3"
    assert await balance(client, account.headers()) == 3
    again = (await client.get(f"/api/v1/contacts/{contact}", headers=account.headers())).json()
    assert again["preview"] is True


async def test_reveal_body_errors(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    missing = await client.post("/api/v1/contacts/reveal", json={}, headers=account.headers())
    assert missing.status_code == 422 and missing.json()["errors"][0]["field"] == "contact_id"
    no_body = await client.post("/api/v1/contacts/reveal", headers=account.headers())
    assert no_body.status_code == 400 and no_body.json()["code"] == "malformed_request"
    wrong = await client.post("/api/v1/contacts/reveal", json={"contact_id": 5}, headers=account.headers())
    assert wrong.status_code == 422
    listed = await client.post("/api/v1/contacts/reveal", json=["ct_1"], headers=account.headers())
    assert listed.status_code == 422


async def test_free_and_granted_credits_spend_free_first(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account(credits=10)
    contact = await factory.contact()
    await client.post(f"/api/v1/contacts/{contact}/reveal", headers=account.headers())
    body = (await client.get("/api/v1/account", headers=account.headers())).json()
    assert body["balance"] == {"total": 34, "free": 24, "paid": 10}
