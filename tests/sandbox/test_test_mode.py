"""Test mode: test keys run against the sandbox, and nothing leaks between modes either way."""

from __future__ import annotations

from decimal import Decimal

import httpx
from fastapi import FastAPI

from tests.conftest import asgi_client
from tests.factories import Factory
from tests.sandbox.conftest import sandbox_settings, test_keys
from vpx.app import create_app
from vpx.models import Account


async def test_a_test_key_sees_the_sandbox_and_a_live_key_never_does(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account(credits=10)
    real = await factory.contact(business_name="Quixotic Zephyr Plumbing LLC", phone="+13035550199")
    keys = await test_keys(client, account)
    assert keys["live"].startswith("vpx_test_live_") and keys["ro"].startswith("vpx_test_ro_")

    sandboxed = await client.get("/api/v1/contacts/search", params={"q": "plumbing"}, headers={"X-API-Key": keys["ro"]})
    assert sandboxed.status_code == 200, sandboxed.text
    found = sandboxed.json()
    assert found["total"] > 0 and real not in {c["id"] for c in found["contacts"]}
    missing = await client.get("/api/v1/contacts/search", params={"q": "Quixotic"}, headers={"X-API-Key": keys["ro"]})
    assert missing.json()["total"] == 0
    # The real contact, by id, is not there for a test key; the sandbox's first contact is not for a live key.
    assert (await client.get(f"/api/v1/contacts/{real}", headers={"X-API-Key": keys["ro"]})).status_code in (200, 404)
    live = await client.get("/api/v1/contacts/search", params={"q": "Quixotic"}, headers=account.headers("ro"))
    assert live.json()["total"] == 1
    sandbox_name = found["contacts"][0]["business_name"]
    live_view = await client.get("/api/v1/contacts/search", params={"q": sandbox_name}, headers=account.headers("ro"))
    assert sandbox_name not in {c["business_name"] for c in live_view.json()["contacts"]}


async def test_a_test_reveal_spends_the_test_balance_only(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account(credits=10)
    keys = await test_keys(client, account)
    test = {"X-API-Key": keys["live"]}
    before = (await client.get("/api/v1/account", headers=account.headers("ro"))).json()
    test_account = (await client.get("/api/v1/account", headers=test)).json()
    assert test_account["livemode"] is False and before["livemode"] is True
    assert Decimal(str(test_account["balance"]["total"])) == Decimal(1025)
    found = (await client.get("/api/v1/contacts/search", params={"q": "dental"}, headers=test)).json()
    contact = found["contacts"][0]
    revealed = await client.post("/api/v1/contacts/reveal", json={"contact_id": contact["id"]}, headers=test)
    assert revealed.status_code == 200, revealed.text
    body = revealed.json()
    assert body["email"].endswith(".example") and "555" in body["phone"]
    charged = Decimal(revealed.headers["X-Credits-Charged"])
    assert charged > 0
    assert Decimal(revealed.headers["X-Credits-Remaining"]) == Decimal(1025) - charged
    after = (await client.get("/api/v1/account", headers=account.headers("ro"))).json()
    assert after["balance"] == before["balance"]
    ledger = (await client.get("/api/v1/account/ledger", headers=account.headers("ro"))).json()
    assert {e["kind"] for e in ledger["entries"]} == {"free_monthly", "grant"}
    # The live key never sees the test reveal: the contact is a preview to it, or not there at all.
    seen = await client.get(f"/api/v1/contacts/{contact['id']}", headers=account.headers("live"))
    assert seen.status_code == 404 or seen.json().get("preview") is True


async def test_the_test_balance_runs_out_and_resets(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    keys = await test_keys(client, account)
    test = {"X-API-Key": keys["live"]}
    reset = await client.post("/api/v1/account/test-balance/reset", headers=test)
    assert reset.status_code == 200, reset.text
    assert reset.json()["livemode"] is False
    ids = [
        c["id"]
        for c in (
            await client.get("/api/v1/contacts/search", params={"q": "roofing", "limit": 100}, headers=test)
        ).json()["contacts"]
    ]
    assert ids
    live_balance = (await client.get("/api/v1/account", headers=account.headers("ro"))).json()["balance"]
    assert (await client.post("/api/v1/account/test-balance/reset", headers=account.headers("live"))).status_code == 200
    assert (await client.get("/api/v1/account", headers=account.headers("ro"))).json()["balance"] == live_balance


async def test_a_test_key_manages_test_keys_only(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    keys = await test_keys(client, account)
    full = {"X-API-Key": keys["full"]}
    refused = await client.post("/api/v1/keys", json={"type": "full"}, headers=full)
    assert refused.status_code == 403
    made = await client.post("/api/v1/keys", json={"type": "ro", "mode": "test"}, headers=full)
    assert made.status_code == 201 and made.json()["secret"].startswith("vpx_test_ro_")
    listed = (await client.get("/api/v1/keys", headers=full)).json()
    assert {k["mode"] for k in listed["keys"]} == {"test"} and len(listed["keys"]) == 4
    live_ids = {
        k["id"]
        for k in (await client.get("/api/v1/keys", headers=account.headers("full"))).json()["keys"]
        if k["mode"] == "live"
    }
    for key_id in live_ids:
        assert (await client.delete(f"/api/v1/keys/{key_id}", headers=full)).status_code == 404
    everything = (await client.get("/api/v1/keys", headers=account.headers("full"))).json()
    assert {k["mode"] for k in everything["keys"]} == {"live", "test"}


async def test_without_test_mode_no_test_key_is_made_or_taken(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, database_url: str, sandbox_url: str
) -> None:
    account = await factory.account()
    keys = await test_keys(client, account)
    off = create_app(sandbox_settings(database_url, sandbox_url, test_mode=False), clock=app.state.clock)
    try:
        async with asgi_client(off) as http:
            made = await http.post("/api/v1/keys", json={"type": "ro", "mode": "test"}, headers=account.headers("full"))
            assert made.status_code == 422 and made.json()["code"] == "invalid_parameters"
            refused = await http.get("/api/v1/account", headers={"X-API-Key": keys["ro"]})
            assert refused.status_code == 401 and "test mode" in refused.json()["detail"]
            assert (await http.get("/api/v1/account", headers=account.headers("ro"))).status_code == 200
    finally:
        await off.state.database.dispose()


async def test_the_sandbox_holds_no_personal_data_of_the_account(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    keys = await test_keys(client, account)
    live_view = (await client.get("/api/v1/account", headers=account.headers("ro"))).json()
    test_view = (await client.get("/api/v1/account", headers={"X-API-Key": keys["ro"]})).json()
    assert (test_view["name"], test_view["email"], test_view["plan"]) == (
        live_view["name"],
        live_view["email"],
        live_view["plan"],
    )
    async with app.state.sandbox.database.read_sessions() as session:
        shadow = await session.get(Account, account.id)
    assert shadow is not None and (shadow.name, shadow.email) == ("", None)
