"""D22: GET /signals filters (alone and combined), since, limit, cursors without overlap or gap even
with inserts between pages; GET /signals/{id}; POST /signals/batch (order, 26 queries → 422)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI

from tests.factories import Factory
from tests.signals.support import event, ingest
from vpx.clock import FixedClock
from vpx.signals import service as signal_service
from vpx.signals.events import BusinessRef, SignalEvent

pytestmark = pytest.mark.asyncio

URL = "/api/v1/signals"
HOT = {"budget": "$9k", "timeline": "Q1", "vendor_evaluation": ["A"]}


def _mix() -> list[SignalEvent]:
    """12 signals over two categories, industries, levels and states."""
    co = BusinessRef(name="Acme Plumbing LLC", city="Denver", state="CO", phone="+13035550100")
    tx = BusinessRef(name="Lone Star Dental", city="Austin", state="TX", phone="+15125550111")
    out = []
    for n in range(12):
        out.append(
            event(
                category="switching_intent" if n % 2 else "tech_install",
                industry="home-services" if n % 3 else "dental",
                business=co if n % 4 < 2 else tx,
                evidence=HOT if n % 3 == 0 else {"interest": "x"},
                source_record_id=f"mix-{n}",
                topic=f"t{n}",
            )
        )
    return out


async def _topics(client: httpx.AsyncClient, headers: dict[str, str], **params: object) -> list[str]:
    response = await client.get(URL, params=params, headers=headers)
    assert response.status_code == 200, response.text
    return [s["topic"] for s in response.json()["signals"]]


async def test_filters_alone_and_combined(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    await ingest(app, _mix())
    headers = (await factory.account()).headers("ro")
    everything = [f"t{n}" for n in reversed(range(12))]
    assert await _topics(client, headers, limit=100) == everything  # newest first
    expected = {
        "category": lambda n: n % 2 == 1,
        "industry": lambda n: n % 3 != 0,
        "intent_level": lambda n: n % 3 == 0,
        "state": lambda n: n % 4 < 2,
    }
    values = {"category": "switching_intent", "industry": "home-services", "intent_level": "hot", "state": "co"}
    for name, keep in expected.items():
        got = await _topics(client, headers, limit=100, **{name: values[name]})
        assert got == [f"t{n}" for n in reversed(range(12)) if keep(n)], name
    both = await _topics(client, headers, limit=100, category="switching_intent", state="CO", industry="home-services")
    assert both == [f"t{n}" for n in reversed(range(12)) if n % 2 == 1 and n % 4 < 2 and n % 3 != 0]
    assert await _topics(client, headers, source_status="fcra_blocked") == []
    assert len(await _topics(client, headers, limit=100, source_status="available")) == 12


async def test_since_compares_created_at(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, clock: FixedClock
) -> None:
    first = clock.now()
    await ingest(app, [event(source_record_id="old", topic="old")])
    clock.set(first + timedelta(hours=1))
    await ingest(app, [event(source_record_id="new", topic="new")])
    headers = (await factory.account()).headers("ro")
    assert await _topics(client, headers, since=first.isoformat()) == ["new"]
    assert await _topics(client, headers, since=(first - timedelta(seconds=1)).isoformat()) == ["new", "old"]
    assert await _topics(client, headers, since="2030-01-01T00:00:00Z") == []


@pytest.mark.parametrize("few", [1, 10_000], ids=["many-recent", "few-recent"])
async def test_since_pages_are_the_same_whichever_plan_reads_them(
    app: FastAPI,
    client: httpx.AsyncClient,
    factory: Factory,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
    few: int,
) -> None:
    """SQLite counts the signals newer than `since` to choose its plan (vpx.signals.service): both
    plans give the same pages, with filters and cursors."""
    monkeypatch.setattr(signal_service, "SINCE_FEW", few)
    first = clock.now()
    await ingest(app, [event(source_record_id=f"old{n}", topic=f"old{n}") for n in range(3)])
    clock.set(first + timedelta(hours=1))
    await ingest(app, [replace(e, topic=f"new-{e.topic}") for e in _mix()])
    headers = (await factory.account()).headers("ro")
    tx_installs = {"state": "TX", "category": "tech_install"}
    for filters, keep in (({}, lambda n: True), (tx_installs, lambda n: n % 4 >= 2 and n % 2 == 0)):
        seen: list[str] = []
        cursor = None
        while True:
            params: dict[str, object] = {"limit": 2, "since": first.isoformat(), **filters}
            if cursor:
                params["cursor"] = cursor
            body = (await client.get(URL, params=params, headers=headers)).json()
            seen += [s["topic"] for s in body["signals"]]
            if (cursor := body["next_cursor"]) is None:
                break
        assert seen == [f"new-t{n}" for n in reversed(range(12)) if keep(n)], filters


async def test_cursor_pages_have_no_overlap_or_gap_even_with_inserts_between(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    await ingest(app, [event(source_record_id=f"a{n}", topic=f"a{n}") for n in range(10)])
    headers = (await factory.account()).headers("ro")
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params: dict[str, object] = {"limit": 3} | ({"cursor": cursor} if cursor else {})
        body = (await client.get(URL, params=params, headers=headers)).json()
        seen += [s["topic"] for s in body["signals"]]
        assert body["limit"] == 3
        cursor = body["next_cursor"]
        pages += 1
        # Newer signals arrive while the client pages: they are not on later pages of this walk.
        await ingest(app, [event(source_record_id=f"new{pages}", topic=f"new{pages}")])
        if cursor is None:
            break
    assert seen == [f"a{n}" for n in reversed(range(10))]
    assert pages == 4


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"category": "gossip"}, "category"),
        ({"industry": "spaceships"}, "industry"),
        ({"intent_level": "lukewarm"}, "intent_level"),
        ({"state": "ZZ"}, "state"),
        ({"source_status": "maybe"}, "source_status"),
        ({"since": "yesterday"}, "since"),
        ({"since": "2026-11-01"}, "since"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"categroy": "tech_install"}, "categroy"),
    ],
)
async def test_bad_parameters_are_422(
    client: httpx.AsyncClient, factory: Factory, params: dict[str, object], field: str
) -> None:
    headers = (await factory.account()).headers("ro")
    response = await client.get(URL, params=params, headers=headers)
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "invalid_parameters"
    assert response.json()["errors"][0]["field"] == field


async def test_get_one_signal(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    contact = await factory.contact()
    report = await ingest(app, [event(contact_id=contact, business=None, evidence=HOT, topic="crm", summary="s")])
    headers = (await factory.account()).headers("ro")
    response = await client.get(f"{URL}/{report.signal_ids[0]}", headers=headers)
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == report.signal_ids[0] and body["id"].startswith("sg_")
    assert (body["category"], body["industry"], body["intent_level"], body["source_status"]) == (
        "switching_intent", "home-services", "hot", "available",
    )  # fmt: skip
    assert body["confidence"] == 0.9 and body["state"] == "CO" and body["city"] == "Denver"
    assert body["evidence"] == HOT and body["summary"] == "s" and body["topic"] == "crm"
    # D9: the price follows the contact's live signal; the preview shows it too.
    assert body["reveal_cost"] == 6 and body["contact"]["id"] == contact and body["contact"]["reveal_cost"] == 6
    preview = (await client.get(f"/api/v1/contacts/{contact}", headers=headers)).json()
    assert preview["reveal_cost"] == 6
    for unknown in ("sg_doesnotexist", "nope", "sg_" + "x" * 30):
        missing = await client.get(f"{URL}/{unknown}", headers=headers)
        assert missing.status_code in (404, 422) and missing.json()["code"] in ("not_found", "invalid_parameters")
    assert (await client.get(f"{URL}/sg_doesnotexist", headers=headers)).status_code == 404


async def test_batch_answers_in_request_order(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    await ingest(app, _mix())
    headers = (await factory.account()).headers("ro")
    queries = [{"state": "TX"}, {"category": "tech_install", "industry": "dental"}, {"state": "CO"}, {}]
    response = await client.post(f"{URL}/batch", json={"queries": queries, "limit_per_query": 2}, headers=headers)
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["query"]["state"] for r in results] == ["TX", None, "CO", None]
    assert [[s["topic"] for s in r["signals"]] for r in results] == [
        ["t11", "t10"],
        ["t6", "t0"],
        ["t9", "t8"],
        ["t11", "t10"],
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"queries": [{}] * 26}, "queries"),
        ({"queries": []}, "queries"),
        ({"queries": [{}], "limit_per_query": 0}, "limit_per_query"),
        ({"queries": [{}], "limit_per_query": 101}, "limit_per_query"),
        ({"queries": [{"state": "ZZ"}]}, "queries[0].state"),
        ({"queries": [{"colour": "red"}]}, "queries[0].colour"),
    ],
)
async def test_bad_batches_are_422(client: httpx.AsyncClient, factory: Factory, body: object, field: str) -> None:
    headers = (await factory.account()).headers("ro")
    response = await client.post(f"{URL}/batch", json=body, headers=headers)
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == field


async def test_25_queries_are_fine(client: httpx.AsyncClient, factory: Factory) -> None:
    headers = (await factory.account()).headers("ro")
    response = await client.post(f"{URL}/batch", json={"queries": [{}] * 25}, headers=headers)
    assert response.status_code == 200 and len(response.json()["results"]) == 25
