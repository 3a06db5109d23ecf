"""The dashboard's signals page: the latest signals as a table, newest first, with their price (D9);
an fcra_blocked signal shows no contact and no evidence (D19)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from fastapi import FastAPI
from httpx_sse import aconnect_sse

from tests.dashboard.conftest import Browser, browser
from tests.dashboard.live_server import live_server
from tests.factories import Factory
from tests.signals.support import event, ingest

pytestmark = pytest.mark.asyncio


async def test_signals_page_lists_the_latest_signals(app: FastAPI, web: Browser, factory: Factory) -> None:
    await web.sign_up()
    empty = (await web.get("/dashboard/signals")).text
    assert "No signals yet" in empty
    contact = await factory.contact()
    hot = {"budget": "$9k", "timeline": "Q1", "vendor_evaluation": ["A"]}
    await ingest(
        app,
        [
            event(contact_id=contact, business=None, topic="helpdesk software", source_record_id="1"),
            event(contact_id=contact, business=None, evidence=hot, category="tech_install", source_record_id="2"),
            event(evidence={"credit_score": 1, "topic": "Hidden"}, source_record_id="3", topic="Hidden topic"),
        ],
    )
    response = await web.get("/dashboard/signals")
    assert response.status_code == 200
    page = response.text
    rows = page.split('<tr data-signal-id="')[1:]
    assert len(rows) == 3
    assert "FCRA blocked" in rows[0] and "Hidden" not in page and "Acme" not in rows[0]
    assert "Technology installed" in rows[1] and ">hot<" in rows[1] and "6 credits" in rows[1]
    assert "Acme Plumbing LLC" in rows[2] and "helpdesk software" in rows[2] and "6 credits" in rows[2]
    assert f'href="/dashboard/contacts/{contact}"' in rows[2]


async def test_the_live_view_is_fed_by_the_stream(
    app: FastAPI, web: Browser, factory: Factory, database_url: str
) -> None:
    """The page points its EventSource at the session-authenticated relay of the D23 stream; through a
    real server, a signed-in browser receives new signals on it (and an anonymous one does not)."""
    await web.sign_up()
    page = (await web.get("/dashboard/signals")).text
    assert 'data-stream="/dashboard/signals/stream"' in page and 'id="signal-feed"' in page
    async with browser(app) as stranger:
        anonymous = await stranger.get("/dashboard/signals/stream")
    assert anonymous.status_code in (303, 401)
    contact = await factory.contact()
    settings = {"dashboard_plain_http": "1", "stream_poll_seconds": "0.1", "mail_to_log": "1"}
    with live_server(database_url, **settings) as live:
        async with httpx.AsyncClient(base_url=live.url, timeout=httpx.Timeout(30, read=None)) as http:
            await Browser(http, app=app).sign_up()
            async with aconnect_sse(http, "GET", "/dashboard/signals/stream") as source:
                assert source.response.status_code == 200
                events = source.aiter_sse()
                await anext(events)  # the opening comment with its reconnection hint
                await ingest(app, [event(contact_id=contact, business=None, topic="live one", source_record_id="l")])
                while True:
                    sse = await asyncio.wait_for(anext(events), timeout=15)
                    if sse.event == "signal":
                        break
                data = json.loads(sse.data)
                assert data["topic"] == "live one" and data["contact"]["id"] == contact
