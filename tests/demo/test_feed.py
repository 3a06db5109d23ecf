"""The live demo feed: each round (a time slot) ingests a few evidence events through the pipeline —
one about a home-services business in the README tour's states, warm or hot, so the tour's auto-buy
rule buys within a round or two — and a slot fed twice adds nothing. Driven by a fixed clock, round by
round; the background task is awaited on its own signal, never on the time."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI

from tests.demo.support import all_signals, load_demo
from tests.factories import Factory
from vpx.clock import FixedClock
from vpx.demo.feed import FEED_ENV, SPOTLIGHT_STATES, DemoFeed, feed_requested, start_demo_feed

pytestmark = pytest.mark.asyncio

# The README tour's rule.
TOUR_RULE = {
    "name": "Home services, CA/CO/TX",
    "industries": ["home-services"],
    "states": ["CA", "CO", "TX"],
    "min_confidence": 0.6,
    "budget_credits": 30,
    "daily_cap": 20,
}


async def test_each_round_adds_signals_and_the_tour_rule_buys(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    await load_demo(app, signals=0)  # 1,000 contacts: home-services businesses in CA and TX among them
    buyer = await factory.account(credits=30)
    created = await client.post("/api/v1/buyer/auto-buy/rules", json=TOUR_RULE, headers=buyer.headers("full"))
    assert created.status_code == 201, created.text
    clock: FixedClock = app.state.clock
    feed = DemoFeed(app.state.database, app.state.settings, clock=clock, interval_seconds=20)
    fed: list[str] = []
    for _ in range(4):
        report = await feed.feed_once()
        assert report.ingested == 2 and report.skipped == []
        fed += report.signal_ids
        again = await feed.feed_once()  # the same slot: nothing new
        assert again.ingested == 0 and again.duplicates == 2
        clock.set(clock.now() + timedelta(seconds=20))

    signals = {s.id: s for s in await all_signals(app)}
    assert sorted(signals) == sorted(fed)
    spotlight = [signals[i] for i in fed[::2]]
    assert all(s.industry == "home-services" and s.state in SPOTLIGHT_STATES for s in spotlight)
    assert all(s.intent_level in ("hot", "warm") and s.confidence >= 0.6 for s in spotlight)
    assert all(s.created_at <= clock.now() and s.observed_at < s.created_at for s in signals.values())
    purchases = (await client.get("/api/v1/buyer/auto-buy/purchases", headers=buyer.headers("full"))).json()
    assert purchases["purchases"]  # the tour's rule bought in the first rounds
    assert {p["signal_id"] for p in purchases["purchases"]} <= set(fed[::2])


async def test_the_server_feeds_in_the_background_when_asked(app: FastAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    await load_demo(app, signals=0)
    monkeypatch.delenv(FEED_ENV, raising=False)
    assert start_demo_feed(app.state.database, app.state.settings, clock=app.state.clock) is None
    monkeypatch.setenv(FEED_ENV, "1")
    assert feed_requested()
    feed = start_demo_feed(app.state.database, app.state.settings, clock=app.state.clock)
    assert feed is not None
    try:
        await asyncio.wait_for(feed.fed.wait(), timeout=60)
    finally:
        await feed.stop()
    assert feed.rounds >= 1 and len(await all_signals(app)) >= 2
    await feed.stop()  # stopping twice is harmless
