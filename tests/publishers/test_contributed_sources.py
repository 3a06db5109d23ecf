"""A contributed contact revealed by another account (D17): its source says `contributed` and nothing of
the account that contributed it, on every surface that shows sources — the reveal, the contact read
again, a batch reveal's results, the `contact.revealed` webhook, the CSV export, the dashboard page —
and a contribution stored before this rule is rewritten by its migration."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from fastapi import FastAPI

from tests import factories
from tests.dashboard.conftest import Browser, browser
from tests.factories import Factory
from tests.webhooks.support import deliveries, webhook_settings
from vpx.config import Settings
from vpx.models import ContactSource

pytestmark = pytest.mark.asyncio

MIGRATION = Path(__file__).parents[2] / "src/vpx/migrations/versions/2026_11_29_contributed_sources.py"


@pytest.fixture
def settings(database_url: str) -> Settings:
    # The dashboard's sign-up emails its confirmation link: to the log, as in the dashboard's tests.
    return webhook_settings(database_url, mail_to_log=True)


async def contributed(client: httpx.AsyncClient, publisher: factories.TestAccount, count: int = 1) -> list[str]:
    rows = [
        {
            "business_name": f"Prairie Dental Care {n}",
            "phone": f"+1303555{n:04d}",
            "email": f"front{n}@prairiedental.example",
            "website": f"https://prairie{n}.example",
            "street": f"{n} Pearl St",
            "city": "Boulder",
            "state": "CO",
            "industry": "dental",
        }
        for n in range(count)
    ]
    response = await client.post("/api/v1/contacts/contribute", json={"contacts": rows}, headers=publisher.headers())
    assert response.status_code == 200, response.text
    return [r["contact_id"] for r in response.json()["results"]]


def assert_anonymous(sources: list[dict[str, Any]], publisher: factories.TestAccount) -> None:
    [source] = sources
    assert source["registry"] == "contributed"
    assert publisher.id not in json.dumps(source) and "acc_" not in json.dumps(source), source


async def test_the_reveal_and_the_contact_read_again(client: httpx.AsyncClient, factory: Factory) -> None:
    publisher, buyer = await factory.account(), await factory.account()
    [contact_id] = await contributed(client, publisher)
    revealed = await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=buyer.headers())
    assert revealed.status_code == 200, revealed.text
    assert_anonymous(revealed.json()["sources"], publisher)
    again = await client.get(f"/api/v1/contacts/{contact_id}", headers=buyer.headers())
    assert_anonymous(again.json()["sources"], publisher)
    assert publisher.id not in revealed.text + again.text


async def test_a_batch_reveal_and_its_webhook(client: httpx.AsyncClient, factory: Factory, app: FastAPI) -> None:
    publisher, buyer = await factory.account(), await factory.account()
    ids = await contributed(client, publisher, 2)
    endpoint = await client.post(
        "/api/v1/webhooks",
        json={"url": "http://127.0.0.1:9/hook", "events": ["contact.revealed"]},
        headers=buyer.headers("full"),
    )
    assert endpoint.status_code == 201, endpoint.text
    batch = await client.post("/api/v1/contacts/batch-reveal", json={"contact_ids": ids}, headers=buyer.headers())
    assert batch.status_code == 200, batch.text
    for result in batch.json()["results"]:
        assert_anonymous(result["contact"]["sources"], publisher)
    assert publisher.id not in batch.text
    payloads = [json.loads(d.payload) for d in await deliveries(app) if d.event_type == "contact.revealed"]
    assert len(payloads) == 2
    for sent in payloads:
        assert_anonymous(sent["data"]["contact"]["sources"], publisher)
        assert publisher.id not in json.dumps(sent)


async def test_the_csv_export(client: httpx.AsyncClient, factory: Factory) -> None:
    publisher, buyer = await factory.account(), await factory.account()
    [contact_id] = await contributed(client, publisher)
    assert (await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=buyer.headers())).status_code == 200
    response = await client.get("/api/v1/exports/contacts.csv", headers=buyer.headers())
    assert response.status_code == 200, response.text
    [row] = list(csv.DictReader(io.StringIO(response.text, newline="")))
    assert row["sources"].startswith("contributed") and "acc_" not in row["sources"]
    assert publisher.id not in response.text


async def test_the_dashboard_page(client: httpx.AsyncClient, factory: Factory, app: FastAPI) -> None:
    publisher = await factory.account()
    [contact_id] = await contributed(client, publisher)
    async with browser(app) as http:
        web = Browser(http)
        await web.sign_up()
        page = f"/dashboard/contacts/{contact_id}"
        done = await web.submit(page, f"{page}/reveal", {"expected_price": "1"})
        assert done.status_code == 303, done.text
        shown = (await web.get(page)).text
    assert "Prairie Dental Care 0" in shown and "contributed" in shown
    assert publisher.id not in shown and "acc_" not in shown


def _migration() -> ModuleType:
    spec = importlib.util.spec_from_file_location("contributed_sources_migration", MIGRATION)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_contributions_stored_before_are_rewritten(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    """A contribution's record id once began with the publisher's account id; the migration keeps its
    random part and drops the account. Registry sources are left as they are."""
    publisher, buyer = await factory.account(), await factory.account()
    ids = await contributed(client, publisher, 2)
    registry_contact = await factory.contact()
    old = [f"{publisher.id}_abcdefghij0123456789", f"{publisher.id}_ABCDEFGHIJ9876543210"]
    async with app.state.database.write_sessions() as session, session.begin():
        for contact_id, record_id in zip(ids, old, strict=True):
            await session.execute(
                sa.update(ContactSource)
                .where(ContactSource.contact_id == int(contact_id.removeprefix("ct_")))
                .values(record_id=record_id)
            )
    async with app.state.database.write_engine.begin() as connection:
        await connection.execute(sa.text(_migration().REWRITE))
        await connection.execute(sa.text(_migration().REWRITE))  # a second run changes nothing
    async with app.state.database.read_sessions() as session:
        rows = (await session.execute(sa.select(ContactSource.registry_name, ContactSource.record_id))).all()
    found = {registry: [] for registry, _ in rows}  # type: dict[str, list[str]]
    for registry, record_id in rows:
        found[registry].append(record_id)
    assert sorted(found["contributed"]) == ["ctb_ABCDEFGHIJ9876543210", "ctb_abcdefghij0123456789"]
    assert all(publisher.id not in r for rs in found.values() for r in rs)
    revealed = await client.post(f"/api/v1/contacts/{ids[0]}/reveal", headers=buyer.headers())
    assert revealed.json()["sources"][0]["record_id"] == "ctb_abcdefghij0123456789"
    shown_registry = await client.post(f"/api/v1/contacts/{registry_contact}/reveal", headers=buyer.headers())
    assert shown_registry.json()["sources"][0]["registry"] != "contributed"
