"""One account cannot see or touch another's keys, ledger or revealed contacts, through any page or
API route: every id of the other account is tried (D2: another account's object is a 404)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import asgi_client
from tests.dashboard.conftest import Browser, secret_of
from tests.factories import Factory
from vpx.cursors import encode_cursor

pytestmark = pytest.mark.asyncio


async def victim_data(victim: Browser, api: httpx.AsyncClient, factory: Factory) -> dict[str, Any]:
    """The victim's account with keys, reveals and ledger entries, and every id that names them."""
    await victim.sign_up("victim@example.com")
    full = secret_of((await victim.create_key("full", name="victim-full")).text)
    await victim.create_key("ro", name="victim-ro", ip_allowlist="203.0.113.5")
    contacts = []
    for n in range(3):
        contact = await factory.contact(business_name=f"Victim Secret {n} Co", phone=f"+1720555010{n}")
        response = await victim.submit(
            f"/dashboard/contacts/{contact}", f"/dashboard/contacts/{contact}/reveal", {"expected_price": "1"}
        )
        assert response.status_code == 303
        contacts.append(contact)
    headers = {"X-API-Key": full}
    keys = (await api.get("/api/v1/keys", headers=headers)).json()["keys"]
    ledger = (await api.get("/api/v1/account/ledger", headers=headers)).json()["entries"]
    phones = [f"+1720555010{n}" for n in range(3)]
    return {"secret": full, "keys": keys, "ledger": ledger, "contacts": contacts, "phones": phones}


def assert_nothing_of(victim: dict[str, Any], text: str, *, previews: bool = False) -> None:
    """No key, ledger entry, revealed detail or email of the victim; business names only where the
    page is a free preview (any account may see a preview)."""
    for key in victim["keys"]:
        assert key["id"] not in text and key["prefix"] not in text and key["name"] not in text
    for entry in victim["ledger"]:
        if entry["kind"] == "reveal":
            assert entry["description"] not in text
    for phone in victim["phones"]:
        assert phone not in text
    assert "victim@example.com" not in text
    if not previews:
        assert "Victim Secret" not in text


async def test_every_id_of_another_account_is_out_of_reach(
    web: Browser, other_web: Browser, app: FastAPI, factory: Factory
) -> None:
    async with asgi_client(app) as api:
        victim = await victim_data(other_web, api, factory)
        await web.sign_up("attacker@example.com")
        mine = {"X-API-Key": secret_of((await web.create_key("full", name="attacker")).text)}
        victim_key_ids = [k["id"] for k in victim["keys"]]

        # API: every key id of the victim is a 404, for reading, changing and revoking.
        for key_id in victim_key_ids:
            for method, body in (("GET", None), ("PATCH", {"name": "mine now"}), ("DELETE", None)):
                response = await api.request(method, f"/api/v1/keys/{key_id}", json=body, headers=mine)
                assert response.status_code == 404, (method, key_id, response.text)
        assert_nothing_of(victim, (await api.get("/api/v1/keys", headers=mine)).text)

        # API: the ledger, even with cursors pointing into the victim's entries.
        ledger_positions = [int(e["id"].removeprefix("le_")) for e in victim["ledger"]]
        for position in [None, *(p + 1 for p in ledger_positions)]:
            params = {"cursor": encode_cursor("ledger", position)} if position else {}
            page = await api.get("/api/v1/account/ledger", params=params, headers=mine)
            assert page.status_code == 200
            assert {e["id"] for e in page.json()["entries"]}.isdisjoint({e["id"] for e in victim["ledger"]})

        # API: the victim's revealed contacts are previews to the attacker, and not in the export.
        for contact in victim["contacts"]:
            body = (await api.get(f"/api/v1/contacts/{contact}", headers=mine)).json()
            assert body["preview"] is True and "phone" not in body
        export = await api.get("/api/v1/exports/contacts.csv", headers=mine)
        assert export.text.count("\r\n") == 1
        assert_nothing_of(victim, export.text)

        # Pages: changing or revoking the victim's keys is a 404 page, and nothing changes.
        for key_id in victim_key_ids:
            for action, data in (("/revoke", {}), ("", {"name": "mine now", "ip_allowlist": ""})):
                response = await web.submit("/dashboard/keys", f"/dashboard/keys/{key_id}{action}", data)
                assert response.status_code == 404, (key_id, action)
        # Pages: the attacker's own views show nothing of the victim.
        for path in ("/dashboard", "/dashboard/keys", "/dashboard/credits", "/dashboard/revealed"):
            assert_nothing_of(victim, (await web.get(path)).text)
        for position in ledger_positions:
            credits = await web.get("/dashboard/credits", params={"cursor": encode_cursor("ledger", position + 1)})
            assert_nothing_of(victim, credits.text)
        for contact in victim["contacts"]:
            number = int(contact.removeprefix("ct_"))
            assert_nothing_of(victim, (await web.get("/dashboard/revealed", params={"after": number - 1})).text)
            page = await web.get(f"/dashboard/contacts/{contact}")
            assert page.status_code == 200 and "Reveal for 1 credit" in page.text
            assert_nothing_of(victim, page.text, previews=True)
        assert (await web.get("/dashboard/exports/contacts.csv")).text.count("\r\n") == 1

        # The victim's keys and data are untouched.
        after = await api.get("/api/v1/keys", headers={"X-API-Key": victim["secret"]})
        assert after.status_code == 200
        assert [(k["id"], k["name"], k["status"], k["ip_allowlist"]) for k in after.json()["keys"]] == [
            (k["id"], k["name"], k["status"], k["ip_allowlist"]) for k in victim["keys"]
        ]
