"""The signals page's live list shows each signal once: what the table above it already holds is
never added to it again, and nothing that arrives between the page and its stream is lost.

- A stream opened on a broker that sat idle (every earlier stream gone) starts from the newest signal,
  as any stream without Last-Event-ID does: not from where the broker last read, which would send
  every signal since as new.
- The page hands its stream the last signal of its table (`after`), and the relay continues from it.
"""

from __future__ import annotations

import asyncio
import json
import re

import httpx
import pytest
from fastapi import FastAPI
from httpx_sse import aconnect_sse

from tests.dashboard.conftest import Browser
from tests.dashboard.live_server import live_server
from tests.factories import Factory
from tests.signals.support import event, ingest
from vpx.signals import service as signal_service
from vpx.signals.stream import SignalBroker

pytestmark = pytest.mark.asyncio


async def test_a_stream_on_an_idle_broker_starts_from_the_newest_signal(app: FastAPI, factory: Factory) -> None:
    contact = await factory.contact()
    await ingest(app, [event(contact_id=contact, business=None, source_record_id="1")])
    broker = SignalBroker(app.state.database, app.state.settings)
    try:
        first = await broker.subscribe(signal_service.SignalFilter())
        broker.unsubscribe(first)  # the page was left: no stream for a while
        await ingest(app, [event(contact_id=contact, business=None, source_record_id=str(n)) for n in (2, 3)])
        broker.wake()
        await asyncio.sleep(0.1)  # the broker's loop had its turn (with nobody to read for)
        again = await broker.subscribe(signal_service.SignalFilter())
        assert again.start_sequence == 3  # not 1: signals 2 and 3 are in the page's table already
        await ingest(app, [event(contact_id=contact, business=None, source_record_id="4")])
        broker.wake()
        await asyncio.wait_for(again.wait(), timeout=10)
        assert [item.sequence for item in again.take()] == [4]
    finally:
        await broker.stop()


async def test_the_page_hands_its_stream_the_last_signal_of_its_table(
    app: FastAPI, web: Browser, factory: Factory, database_url: str
) -> None:
    contact = await factory.contact()
    await ingest(app, [event(contact_id=contact, business=None, source_record_id=str(n)) for n in (1, 2)])
    settings = {"dashboard_plain_http": "1", "stream_poll_seconds": "0.1", "mail_to_log": "1"}
    with live_server(database_url, **settings) as live:
        async with httpx.AsyncClient(base_url=live.url, timeout=httpx.Timeout(30, read=None)) as http:
            browser = Browser(http, app=app)
            await browser.sign_up()
            page = (await http.get("/dashboard/signals")).text
            found = re.search(r'data-stream="([^"]+)"', page)
            assert found is not None and found.group(1) == "/dashboard/signals/stream?after=2", page
            # A signal arrives before the browser opens the stream: it is in neither the table nor the list.
            await ingest(app, [event(contact_id=contact, business=None, topic="in between", source_record_id="3")])
            async with aconnect_sse(http, "GET", found.group(1)) as source:
                assert source.response.status_code == 200
                events = source.aiter_sse()
                await anext(events)  # the opening comment
                sse = await asyncio.wait_for(anext(events), timeout=15)
                assert sse.event == "signal" and sse.id == "3" and json.loads(sse.data)["topic"] == "in between"
