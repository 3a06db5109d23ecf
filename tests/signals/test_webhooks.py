"""signal.created webhooks (D29) through the real outbox, worker and an HTTP receiver: only matching
signals, one event per signal and account, never an fcra_blocked one unless the subscription's filter
asks for source_status=fcra_blocked, and then reduced (D19)."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from tests.factories import Factory
from tests.signals.support import event, ingest
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliver_round, deliveries, payload, receiver, webhook_settings
from vpx.config import Settings

pytestmark = pytest.mark.asyncio
__all__ = ["receiver"]

HOT = {"budget": "$9k", "timeline": "Q1", "vendor_evaluation": ["A"]}


@pytest.fixture
def settings(database_url: str) -> Settings:
    return webhook_settings(database_url)


async def _subscribe(client: httpx.AsyncClient, headers: dict[str, str], url: str, **signal_filter: str) -> None:
    body = {"url": url, "events": ["signal.created"], "signal_filter": signal_filter or None}
    response = await client.post("/api/v1/webhooks", json=body, headers=headers)
    assert response.status_code == 201, response.text


async def test_signal_created_reaches_matching_subscriptions_only(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver
) -> None:
    buyer = (await factory.account()).headers("full")
    other = (await factory.account()).headers("full")
    await _subscribe(client, buyer, receiver.url("/all"))
    await _subscribe(client, buyer, receiver.url("/hot-co"), intent_level="hot", state="CO")
    await _subscribe(client, other, receiver.url("/dental"), industry="dental")
    await _subscribe(client, other, receiver.url("/blocked"), source_status="fcra_blocked")
    contact = await factory.contact()
    await ingest(
        app,
        [
            event(contact_id=contact, business=None, evidence=HOT, topic="hot", source_record_id="1"),
            event(contact_id=contact, business=None, topic="cold", source_record_id="2"),
            event(contact_id=contact, business=None, evidence={**HOT, "eviction_history": "x"}, source_record_id="3"),
        ],
    )
    # Re-ingesting raises nothing: only new signals reach the hooks.
    await ingest(app, [event(contact_id=contact, business=None, evidence=HOT, topic="hot", source_record_id="1")])
    rows = await deliveries(app)
    assert len(rows) == 4
    assert await deliver_round(app) == 4
    got = {
        path: [payload(r.body) for r in receiver.received(path)] for path in ("/all", "/hot-co", "/dental", "/blocked")
    }
    # Deliveries to one endpoint run concurrently, so their arrival order is not the ingest order.
    assert sorted(p["data"]["topic"] for p in got["/all"]) == ["cold", "hot"]
    assert [p["data"]["topic"] for p in got["/hot-co"]] == ["hot"]
    assert got["/dental"] == []
    [blocked] = got["/blocked"]
    assert blocked["type"] == "signal.created"
    data = blocked["data"]
    assert data["source_status"] == "fcra_blocked" and data["contact"] is None and data["evidence"] is None
    assert data["intent_level"] is None and data["reveal_cost"] is None and data["summary"] is None
    assert "eviction" not in receiver.received("/blocked")[0].body.decode()
    [hot] = [p["data"] for p in got["/all"] if p["data"]["topic"] == "hot"]
    assert hot["contact"]["id"] == contact and hot["reveal_cost"] == 6 and hot["evidence"] == HOT
    # One event per signal and account: the buyer's two subscriptions share the hot signal's event id.
    assert len({r.event_id for r in rows}) == len({(r.account_id, r.payload) for r in rows}) == 3
