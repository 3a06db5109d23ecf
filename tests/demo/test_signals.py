"""`vpx demo` loads a month of intent signals through the ingestion pipeline: every category at every
level D20 allows, some fcra_blocked (D21), entered over the last 30 days, linked to demo contacts whose
price tier they raise (D9); the API answers them; loading the demo again adds nothing."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.demo.support import all_signals, load_demo
from tests.factories import Factory
from vpx.models import Contact

pytestmark = pytest.mark.asyncio

# D20: a bant_qualified event has a timeline (never cold); a permit has its date (never cold); a topic
# surge is research activity, warm at most (a vendor read about).
EXPECTED = {
    ("switching_intent", "hot"), ("switching_intent", "warm"), ("switching_intent", "cold"),
    ("bant_qualified", "hot"), ("bant_qualified", "warm"),
    ("funding_ma", "hot"), ("funding_ma", "warm"), ("funding_ma", "cold"),
    ("topic_surge", "warm"), ("topic_surge", "cold"),
    ("permit_filed", "hot"), ("permit_filed", "warm"),
    ("tech_install", "hot"), ("tech_install", "warm"), ("tech_install", "cold"),
}  # fmt: skip


async def test_the_demo_loads_every_category_and_level_through_the_pipeline(app: FastAPI) -> None:
    now = app.state.clock.now()
    added, report = await load_demo(app)
    assert added == 1000
    assert report.ingested == 200 and report.skipped == [] and report.duplicates == 0
    assert report.fcra_blocked >= 5 and report.contacts_created == 0  # every event names a demo contact
    signals = await all_signals(app)
    assert len(signals) == 200
    assert {(s.category, s.intent_level) for s in signals} == EXPECTED
    assert {(s.category, s.intent_level) for s in signals if s.source_status == "available"} == EXPECTED
    assert {s.source for s in signals} == {"evidence"} and all(s.source_record_id.startswith("demo:") for s in signals)
    blocked = [s for s in signals if s.source_status == "fcra_blocked"]
    assert len(blocked) == report.fcra_blocked and all(s.contact_id is None for s in blocked)

    # Spread over the last 30 days, entered in the order they were observed.
    assert all(now - timedelta(days=30) < s.created_at <= now and s.observed_at < s.created_at for s in signals)
    assert len({s.created_at.date() for s in signals}) >= 25
    created = [s.created_at for s in signals]
    assert created == sorted(created)  # sequence grows with created_at

    # Each available signal is about a demo contact of its own vertical and place, whose price tier it raised.
    async with app.state.database.read_sessions() as session:
        contacts = {c.id: c for c in await session.scalars(select(Contact).where(Contact.origin == "demo"))}
    for signal in signals:
        if signal.source_status == "available":
            assert signal.contact_id is not None
            contact = contacts[signal.contact_id]
            assert (contact.industry, contact.state, contact.city) == (signal.industry, signal.state, signal.city)
            assert contact.intent_level is not None
    permits = [contacts[s.contact_id] for s in signals if s.category == "permit_filed" and s.contact_id]
    assert permits and all(c.industry in {"home-services", "construction", "solar", "telecommunications",
                                          "environmental-services"} for c in permits)  # fmt: skip
    assert {c.intent_level for c in contacts.values()} >= {"hot", "warm", "cold"}


async def test_the_signals_api_answers_the_demo(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    await load_demo(app)
    now = app.state.clock.now()
    headers = (await factory.account()).headers("ro")
    page = (await client.get("/api/v1/signals", headers=headers)).json()
    assert len(page["signals"]) == 25 and page["next_cursor"]
    for params in (
        {"category": "topic_surge"},
        {"intent_level": "hot"},
        {"industry": "home-services"},
        {"source_status": "fcra_blocked"},
        {"since": (now - timedelta(days=7)).isoformat()},
    ):
        response = await client.get("/api/v1/signals", params={**params, "limit": 100}, headers=headers)
        assert response.status_code == 200, response.text
        found = response.json()["signals"]
        assert found, params
        for signal in found:
            for name, value in params.items():
                # An fcra_blocked signal shows only its public fields (D19): no level.
                if name != "since" and (signal["source_status"] == "available" or name != "intent_level"):
                    assert signal[name] == value
    blocked = (await client.get("/api/v1/signals", params={"source_status": "fcra_blocked"}, headers=headers)).json()
    assert all(s["contact"] is None and s["evidence"] is None for s in blocked["signals"])
    recent = await client.get("/api/v1/signals", params={"since": (now - timedelta(days=7)).isoformat(), "limit": 100},
                              headers=headers)  # fmt: skip
    assert 0 < len(recent.json()["signals"]) < 100  # a week of the month


async def test_loading_the_demo_twice_adds_nothing(app: FastAPI) -> None:
    await load_demo(app)
    before = await all_signals(app)
    app.state.clock.set(app.state.clock.now() + timedelta(days=2))  # another day: still the same records
    added, report = await load_demo(app)
    assert added == 0 and report.ingested == 0 and report.duplicates == 200
    assert [s.id for s in await all_signals(app)] == [s.id for s in before]
