"""D31: GET /contacts/{id}/decision-makers: names and titles free to buying keys, a person's phone
only after the account revealed the contact, nothing charged."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from tests.factories import Factory
from tests.registries.conftest import Importer
from tests.registries.formats import write_nppes, write_nucc
from tests.registries.test_nppes import CLINIC, _contact

pytestmark = pytest.mark.asyncio


async def _clinic(app: FastAPI, run_import: Importer, tmp_path: Path) -> str:
    await run_import("nucc", write_nucc(tmp_path / "nucc.csv"))
    await run_import("nppes", write_nppes(tmp_path / "npi.csv", [CLINIC]))
    return f"ct_{(await _contact(app, 'nppes', CLINIC['npi'])).id}"


async def test_names_are_free_and_the_phone_follows_the_reveal(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, run_import: Importer, tmp_path: Path
) -> None:
    contact_id = await _clinic(app, run_import, tmp_path)
    buyer = await factory.account(credits=5)
    url = f"/api/v1/contacts/{contact_id}/decision-makers"

    before = await client.get(url, headers=buyer.headers("live"))
    assert before.status_code == 200, before.text
    body = before.json()
    assert body["contact_id"] == contact_id and body["revealed"] is False
    (person,) = body["decision_makers"]
    assert person["id"].startswith("dm_")
    assert (person["name"], person["title"], person["role"]) == ("Maria Ortega", "Owner", "authorized_official")
    assert person["source"] == {"registry": "nppes", "record_id": CLINIC["npi"]}
    assert person["phone"] is None and person["phone_available"] is True
    revealed = await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=buyer.headers("live"))
    assert revealed.status_code == 200, revealed.text
    after = (await client.get(url, headers=buyer.headers("full"))).json()
    assert after["revealed"] is True and after["decision_makers"][0]["phone"] == "+12085550144"

    other = await factory.account()
    assert (await client.get(url, headers=other.headers("live"))).json()["decision_makers"][0]["phone"] is None
    # Listing charged nothing: the reveal is the only debit.
    ledger = (await client.get("/api/v1/account/ledger", headers=buyer.headers("live"))).json()
    assert sum(1 for entry in ledger["entries"] if entry["kind"] == "reveal") == 1


async def test_read_only_keys_and_unknown_contacts(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, run_import: Importer, tmp_path: Path
) -> None:
    contact_id = await _clinic(app, run_import, tmp_path)
    account = await factory.account()
    refused = await client.get(f"/api/v1/contacts/{contact_id}/decision-makers", headers=account.headers("ro"))
    assert refused.status_code == 403 and refused.json()["code"] == "insufficient_permission"
    for unknown in ("ct_999999", "ct_x", "nope"):
        missing = await client.get(f"/api/v1/contacts/{unknown}/decision-makers", headers=account.headers("live"))
        assert missing.status_code == 404 and missing.json()["code"] == "not_found"


async def test_a_contact_without_people_lists_none(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    contact_id = await factory.contact()
    response = await client.get(f"/api/v1/contacts/{contact_id}/decision-makers", headers=account.headers("live"))
    assert response.status_code == 200 and response.json()["decision_makers"] == []
