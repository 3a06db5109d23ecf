"""GET /signals/stream (D23) with a real SSE client against real server processes: only matching
events arrive; Read Only and Standard keys get 403; Last-Event-ID replays exactly the missed events;
a signal ingested through one server process reaches a stream held by another; keep-alive comments;
a connection's lifetime ends cleanly; fcra_blocked only when asked for, and reduced (D19)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from httpx_sse import ServerSentEvent, aconnect_sse

from tests.dashboard.live_server import LiveServer, live_server
from tests.factories import Factory
from tests.signals.support import event, ingest

pytestmark = pytest.mark.asyncio

HOT = {"budget": "$9k", "timeline": "Q1", "vendor_evaluation": ["A"]}
ADMIN_TOKEN = "stream-test-admin-token-0123456789"
STREAM_SETTINGS = {"stream_poll_seconds": "0.1", "stream_keepalive_seconds": "1", "admin_token": ADMIN_TOKEN}
WAIT_S = 15.0


@pytest.fixture
def server(database_url: str, app: FastAPI) -> Iterator[LiveServer]:
    # `app` first: it empties the database the server then reads.
    with live_server(database_url, **STREAM_SETTINGS) as live:
        yield live


class Stream:
    """An open stream: its events as they arrive, read by a background task."""

    def __init__(self) -> None:
        self.events: asyncio.Queue[ServerSentEvent] = asyncio.Queue()
        self.opened = asyncio.Event()
        self.ended = asyncio.Event()

    async def next_signal(self, wait_s: float = WAIT_S) -> dict[str, Any]:
        while True:
            sse = await asyncio.wait_for(self.events.get(), timeout=wait_s)
            if sse.event == "signal":
                data: dict[str, Any] = json.loads(sse.data)
                assert sse.id == str(data["sequence"])
                return data

    async def nothing_more(self, seconds: float = 1.0) -> None:
        with pytest.raises(TimeoutError):
            await self.next_signal(wait_s=seconds)


async def _read(url: str, headers: dict[str, str], stream: Stream, params: dict[str, str] | None) -> None:
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(30, read=None)) as http,
        aconnect_sse(http, "GET", f"{url}/api/v1/signals/stream", headers=headers, params=params) as source,
    ):
        assert source.response.status_code == 200, await source.response.aread()
        assert source.response.headers["content-type"].startswith("text/event-stream")
        async for sse in source.aiter_sse():
            stream.opened.set()
            await stream.events.put(sse)
    stream.ended.set()


async def open_stream(url: str, headers: dict[str, str], params: dict[str, str] | None = None) -> AsyncIterator[Stream]:
    stream = Stream()
    task = asyncio.create_task(_read(url, headers, stream, params))
    try:
        await asyncio.wait_for(stream.opened.wait(), timeout=WAIT_S)
        yield stream
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


streaming = contextlib.asynccontextmanager(open_stream)


async def test_only_matching_signals_arrive(app: FastAPI, server: LiveServer, factory: Factory) -> None:
    full = (await factory.account()).headers("full")
    contact = await factory.contact()
    async with streaming(server.url, full, {"industry": "dental", "intent_level": "hot"}) as stream:
        await ingest(
            app,
            [
                event(contact_id=contact, business=None, industry="home-services", evidence=HOT, source_record_id="1"),
                event(contact_id=contact, business=None, industry="dental", source_record_id="2"),  # cold
                event(contact_id=contact, business=None, industry="dental", evidence={**HOT, "credit_score": 1},
                      source_record_id="3"),  # fcra_blocked: not without asking
                event(contact_id=contact, business=None, industry="dental", evidence=HOT, source_record_id="4",
                      topic="the one"),
            ],
        )  # fmt: skip
        got = await stream.next_signal()
        assert got["topic"] == "the one" and got["industry"] == "dental" and got["intent_level"] == "hot"
        assert got["contact"]["id"] == contact and got["reveal_cost"] == 6
        await stream.nothing_more()


async def test_fcra_blocked_only_when_asked_for_and_reduced(app: FastAPI, server: LiveServer, factory: Factory) -> None:
    full = (await factory.account()).headers("full")
    contact = await factory.contact()
    async with (
        streaming(server.url, full, {"source_status": "fcra_blocked"}) as blocked,
        streaming(server.url, full) as everything,
    ):
        await ingest(
            app,
            [
                event(
                    contact_id=contact, business=None, evidence={**HOT, "eviction_history": "x"}, source_record_id="b"
                ),
                event(contact_id=contact, business=None, evidence=HOT, source_record_id="a"),
            ],
        )
        reduced = await blocked.next_signal()
        assert reduced["source_status"] == "fcra_blocked"
        assert reduced["contact"] is None and reduced["evidence"] is None and reduced["summary"] is None
        assert reduced["intent_level"] is None and reduced["reveal_cost"] is None
        await blocked.nothing_more()
        available = await everything.next_signal()
        assert available["source_status"] == "available" and available["contact"]["id"] == contact
        await everything.nothing_more()


@pytest.mark.parametrize("key_type", ["ro", "live"])
async def test_read_only_and_standard_keys_get_403(client: httpx.AsyncClient, factory: Factory, key_type: str) -> None:
    headers = (await factory.account()).headers(key_type)
    response = await client.get("/api/v1/signals/stream", headers=headers)
    assert response.status_code == 403
    assert response.headers["content-type"].startswith("application/problem+json")
    assert "Full Access" in response.json()["detail"]


@pytest.mark.parametrize(
    ("query", "headers"),
    [("industry=plumbing-ish", {}), ("surprise=1", {}), ("", {"Last-Event-ID": "abc"}), ("", {"Last-Event-ID": "-1"})],
)
async def test_bad_filters_and_ids_are_422(
    client: httpx.AsyncClient, factory: Factory, query: str, headers: dict[str, str]
) -> None:
    full = (await factory.account()).headers("full")
    response = await client.get(f"/api/v1/signals/stream?{query}", headers={**full, **headers})
    assert response.status_code == 422, response.text


async def test_last_event_id_replays_exactly_the_missed_events(
    app: FastAPI, server: LiveServer, factory: Factory
) -> None:
    full = (await factory.account()).headers("full")
    contact = await factory.contact()

    def home(n: int, **fields: Any) -> Any:
        return event(contact_id=contact, business=None, source_record_id=f"r{n}", topic=f"t{n}", **fields)

    async with streaming(server.url, full, {"industry": "home-services"}) as stream:
        await ingest(app, [home(1), home(2)])
        first, second = await stream.next_signal(), await stream.next_signal()
        assert [first["topic"], second["topic"]] == ["t1", "t2"]
    # Missed while disconnected: two matching signals, one that is not.
    await ingest(app, [home(3), home(4, industry="dental"), home(5)])
    resumed = {**full, "Last-Event-ID": str(second["sequence"])}
    async with streaming(server.url, resumed, {"industry": "home-services"}) as stream:
        replayed = [await stream.next_signal(), await stream.next_signal()]
        assert [s["topic"] for s in replayed] == ["t3", "t5"]
        await ingest(app, [home(6)])
        live = await stream.next_signal()
        assert live["topic"] == "t6"
        await stream.nothing_more()


async def test_a_signal_ingested_through_one_server_reaches_a_stream_on_another(
    app: FastAPI, server: LiveServer, factory: Factory, database_url: str, backend: str
) -> None:
    full = (await factory.account()).headers("full")
    contact = await factory.contact()
    with live_server(database_url, **STREAM_SETTINGS) as other:
        async with streaming(other.url, full) as stream:
            body = [{"category": "switching_intent", "industry": "home-services", "observed_at": "2026-11-20T10:00:00Z",
                     "contact_id": contact, "evidence": HOT, "topic": f"via another process ({backend})"}]  # fmt: skip
            async with httpx.AsyncClient() as http:
                answer = await http.post(
                    f"{server.url}/api/v1/admin/signals", json=body, headers={"X-Admin-Token": ADMIN_TOKEN}
                )
            assert answer.status_code in (200, 201), answer.text
            got = await stream.next_signal()
            assert got["topic"] == f"via another process ({backend})"


async def test_keep_alive_comments_arrive(server: LiveServer, factory: Factory) -> None:
    full = (await factory.account()).headers("full")
    comments: list[str] = []
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as http,
        http.stream("GET", f"{server.url}/api/v1/signals/stream", headers=full) as response,
    ):
        assert response.status_code == 200

        async def read() -> None:
            async for line in response.aiter_lines():
                if line.startswith(":"):
                    comments.append(line)
                    if len(comments) >= 3:
                        return

        await asyncio.wait_for(read(), timeout=WAIT_S)
    assert any("ping" in c for c in comments), comments


async def test_a_connection_ends_cleanly_after_its_lifetime(app: FastAPI, database_url: str, factory: Factory) -> None:
    full = (await factory.account()).headers("full")
    with live_server(database_url, **STREAM_SETTINGS, stream_max_seconds="2") as short:
        stream = Stream()
        await asyncio.wait_for(_read(short.url, full, stream, None), timeout=WAIT_S)
        assert stream.ended.is_set()
        retries = []
        while not stream.events.empty():
            retries.append(stream.events.get_nowait().retry)
        assert retries and retries[-1] == 1000  # the reconnection hint comes last


async def test_a_disconnected_client_frees_its_subscription_at_once(app: FastAPI, factory: Factory) -> None:
    """A real uvicorn server in this process, so the broker can be looked at: closing the client's
    connection removes its subscription without waiting for a keep-alive or the lifetime."""
    import uvicorn

    from tests.dashboard.live_server import free_port

    full = (await factory.account()).headers("full")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    serving = asyncio.create_task(server.serve())
    try:
        for _ in range(200):
            if server.started:
                break
            await asyncio.sleep(0.05)
        broker = app.state.signal_broker
        async with streaming(f"http://127.0.0.1:{port}", full):
            assert len(broker.subscriptions) == 1
        for _ in range(50):
            if not broker.subscriptions:
                break
            await asyncio.sleep(0.1)
        assert broker.subscriptions == set()
    finally:
        server.should_exit = True
        await serving
        await app.state.signal_broker.stop()
