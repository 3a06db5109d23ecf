"""auto_buy.purchased webhook events (D24, D29) through the real outbox and worker to a real HTTP
receiver, and the purchases list's pages."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from tests.autobuy.support import PURCHASES, create_rule, signal_for
from tests.autobuy.test_matching import contacts_in
from tests.factories import Factory
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliver_round, payload, receiver, webhook_settings
from vpx.config import Settings

pytestmark = pytest.mark.asyncio
__all__ = ["receiver"]


@pytest.fixture
def settings(database_url: str) -> Settings:
    return webhook_settings(database_url)


async def test_purchases_raise_webhook_events_and_page_without_overlap(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver
) -> None:
    buyer = await factory.account(credits=100)
    full = buyer.headers("full")
    hook = await client.post(
        "/api/v1/webhooks", json={"url": receiver.url("/buys"), "events": ["auto_buy.purchased"]}, headers=full
    )
    assert hook.status_code == 201, hook.text
    first = await create_rule(client, full)
    second = await create_rule(client, full, industries=["dental"])
    home = await contacts_in(factory, 5)
    dental = await contacts_in(factory, 2, industry="dental", business_name="Smile")
    for n, contact in enumerate(home + dental):
        await signal_for(app, contact, record=f"{n}", industry="dental" if contact in dental else "home-services")
    assert await deliver_round(app) == 7
    payloads = [payload(r.body) for r in receiver.received("/buys")]
    assert [p["type"] for p in payloads] == ["auto_buy.purchased"] * 7
    assert {p["data"]["rule_id"] for p in payloads} == {first["id"], second["id"]}
    assert all(p["data"]["contact"]["phone"] and p["data"]["credits_charged"] == 1 for p in payloads)
    assert {p["data"]["contact_id"] for p in payloads} == set(home + dental)
    seen: list[str] = []
    cursor = None
    while True:
        query = f"?limit=3&rule_id={first['id']}" + (f"&cursor={cursor}" if cursor else "")
        page = (await client.get(PURCHASES + query, headers=full)).json()
        seen += [p["id"] for p in page["purchases"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == 5
