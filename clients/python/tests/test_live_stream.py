"""`signals.stream()` against a live `vpx serve` whose connections end every 2 seconds: the sync
client reconnects by itself with Last-Event-ID, misses nothing and yields nothing twice; and ends,
without reconnecting, when the service closes the stream because its access ended."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator

import httpx
import pytest
import uvicorn
from tests.conftest import test_settings
from tests.factories import Factory
from vpx.app import create_app
from vpx.clock import Clock

import vpx_client
from client_support import LiveServer
from conftest import ingest
from vpx_client import Client


def events(state: str, count: int, topic: str) -> list[dict[str, object]]:
    return [
        {
            "category": "tech_install",
            "industry": "veterinary",
            "observed_at": "2026-11-20T10:00:00Z",
            "topic": topic,
            "business": {"name": f"Paws Clinic {uuid.uuid4().hex[:8]}", "city": "Casper", "state": state},
            "evidence": {"technology": "practice software"},
        }
        for _ in range(count)
    ]


def consume(stream: vpx_client.SignalStream, until: Callable[[list[vpx_client.SignalEvent]], bool]) -> list[str]:
    """Reads ``stream`` in a thread until ``until(events so far)``; fails the test if that takes more
    than a minute (a limit against hanging, not a measure)."""
    events: list[vpx_client.SignalEvent] = []
    errors: list[BaseException] = []

    def read() -> None:
        try:
            for event in stream:
                events.append(event)
                if until(events):
                    return
        except BaseException as exc:
            errors.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=60)
    assert not reader.is_alive(), f"the stream stopped yielding after {len(events)} events"
    assert errors == []
    return [event.signal.id for event in events]


def newest(client: Client, state: str) -> int:
    page = client.signals.list(industry="veterinary", state=state, limit=1)
    return page.signals[0].sequence if page.signals else 0


def test_the_stream_reconnects_by_itself_and_never_repeats(server: LiveServer) -> None:
    client = Client(server.seed.keys["full"], base_url=server.url)
    topic = f"stream-{uuid.uuid4().hex[:8]}"
    rounds, per_round = 4, 2
    ingested: list[str] = []

    def produce() -> None:
        for _ in range(rounds):
            ingested.extend(server.ingest(events("WY", per_round, topic)))
            # Spread the rounds over more than one connection lifetime (2 s).
            threading.Event().wait(0.8)

    with client.signals.stream(industry="veterinary", state="WY", last_event_id=newest(client, "WY")) as stream:
        threading.Thread(target=produce, daemon=True).start()
        got = consume(stream, lambda events: len(events) == rounds * per_round)
        connections = stream.connections

    assert got == ingested  # in commit order, each once
    assert connections >= 2  # the server ended at least one connection and the client came back


def test_a_stream_started_from_now_misses_nothing_before_its_first_event(server: LiveServer) -> None:
    """Started without an id, the stream still names where it resumes: a signal committed while it
    is between two connections, before it yielded anything, still arrives."""
    client = Client(server.seed.keys["full"], base_url=server.url)
    topic = f"from-now-{uuid.uuid4().hex[:8]}"
    with client.signals.stream(industry="veterinary", state="ND") as stream:
        sent: list[str] = []

        def produce() -> None:
            threading.Event().wait(2.5)  # past the first connection's 2 s lifetime
            sent.extend(server.ingest(events("ND", 1, topic)))

        threading.Thread(target=produce, daemon=True).start()
        got = consume(stream, lambda events: len(events) == 1)
        connections = stream.connections

    assert got == sent and connections >= 2


def test_a_new_stream_resumes_from_a_saved_event_id(server: LiveServer) -> None:
    client = Client(server.seed.keys["full"], base_url=server.url)
    topic = f"resume-{uuid.uuid4().hex[:8]}"
    start = newest(client, "MT")
    first = server.ingest(events("MT", 1, topic))

    with client.signals.stream(industry="veterinary", state="MT", last_event_id=start) as stream:
        assert consume(stream, lambda events: len(events) == 1) == first
        saved = stream.last_event_id
    missed = server.ingest(events("MT", 3, topic))  # while nobody listens
    with client.signals.stream(industry="veterinary", state="MT", last_event_id=saved) as stream:
        replayed = consume(stream, lambda events: len(events) == 3)

    assert saved is not None and int(saved) > start
    assert replayed == missed


def _take(stream: vpx_client.SignalStream, count: int) -> Iterator[vpx_client.SignalEvent]:
    for n, event in enumerate(stream, start=1):
        yield event
        if n == count:
            return


def test_the_client_drops_an_event_a_server_sends_again() -> None:
    """A server (or a proxy's replay) that repeats an id the client already yielded: dropped. The
    reconnection carries the last id the client yielded. (A stand-in server: the real one never
    repeats, so only a fake can show the guard.)"""
    connections: list[str | None] = []
    bodies = [
        b": hello\nretry: 0\n\nid: 1\nevent: signal\ndata: {signal1}\n\nid: 2\nevent: signal\ndata: {signal2}\n\n",
        b"id: 2\nevent: signal\ndata: {signal2}\n\n: ping\n\nid: 3\nevent: signal\ndata: {signal3}\n\n",
    ]

    def signal(sequence: int) -> bytes:
        return (
            f'{{"id": "sg_{sequence}", "sequence": {sequence}, "category": "tech_install", "industry": "solar",'
            f' "intent_level": "cold", "source_status": "available", "confidence": 0.5, "topic": null,'
            f' "state": "CO", "city": null, "observed_at": "2026-11-20T10:00:00Z", "created_at":'
            f' "2026-11-20T10:00:00Z", "summary": null, "evidence": {{}}, "reveal_cost": 1, "contact": null}}'
        ).encode()

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v1/signals":  # where a stream "from now" starts: nothing yet
            return httpx.Response(200, json={"signals": [], "limit": 1, "next_cursor": None})
        connections.append(request.headers.get("Last-Event-ID"))
        body = bodies[min(len(connections), len(bodies)) - 1]
        for n in (1, 2, 3):
            body = body.replace(b"{signal%d}" % n, signal(n))
        return httpx.Response(200, content=body, headers={"Content-Type": "text/event-stream"})

    client = Client("vpx_full_test", base_url="http://vpx.test", transport=httpx.MockTransport(answer))
    with client.signals.stream() as stream:
        ids = [e.signal.id for e in _take(stream, 3)]

    assert ids == ["sg_1", "sg_2", "sg_3"]
    assert connections == ["0", "2"]


CLOSED = b'event: closed\ndata: {"reason": "key_revoked", "detail": "The API key was revoked."}\n\n'


def _signal_body(sequence: int) -> bytes:
    return (
        f'{{"id": "sg_{sequence}", "sequence": {sequence}, "category": "tech_install", "industry": "solar",'
        f' "intent_level": "cold", "source_status": "available", "confidence": 0.5, "topic": null,'
        f' "state": "CO", "city": null, "observed_at": "2026-11-20T10:00:00Z", "created_at":'
        f' "2026-11-20T10:00:00Z", "summary": null, "evidence": {{}}, "reveal_cost": 1, "contact": null}}'
    ).encode()


def _closing_server(connections: list[str | None]) -> httpx.MockTransport:
    """A stand-in server whose first connection sends one signal, then `closed`, then ends; any later
    connection is refused as the service refuses a revoked key."""

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/api/v1/signals":
            return httpx.Response(200, json={"signals": [], "limit": 1, "next_cursor": None})
        connections.append(request.headers.get("Last-Event-ID"))
        if len(connections) > 1:  # as the service answers a revoked key
            problem = {"type": "urn:vpx:problem:invalid_api_key", "status": 401, "code": "invalid_api_key"}
            return httpx.Response(401, json=problem, headers={"Content-Type": "application/problem+json"})
        body = b": hello\nretry: 0\n\nid: 7\nevent: signal\ndata: " + _signal_body(7) + b"\n\n" + CLOSED
        return httpx.Response(200, content=body, headers={"Content-Type": "text/event-stream"})

    return httpx.MockTransport(answer)


def test_a_closed_event_ends_the_stream_without_reconnecting() -> None:
    """The service's last `closed` event is the end: the signals before it are yielded, then
    `StreamClosed` with the reason, and no other connection is made."""
    connections: list[str | None] = []
    client = Client("vpx_full_test", base_url="http://vpx.test", transport=_closing_server(connections))
    got: list[str] = []
    with client.signals.stream() as stream:
        with pytest.raises(vpx_client.StreamClosed) as closed:
            for event in stream:
                got.append(event.signal.id)
        with pytest.raises(StopIteration):
            next(stream)

    assert got == ["sg_7"] and connections == ["0"]
    assert closed.value.reason == "key_revoked" and closed.value.detail == "The API key was revoked."
    assert isinstance(closed.value, vpx_client.VpxError) and closed.value.status is None
    assert stream.closed_reason == "key_revoked" and stream.last_event_id == "7"


async def test_the_async_stream_ends_on_a_closed_event_too() -> None:
    connections: list[str | None] = []
    client = vpx_client.AsyncClient("vpx_full_test", base_url="http://vpx.test", transport=_closing_server(connections))
    got: list[str] = []
    async with client, client.signals.stream() as stream:
        with pytest.raises(vpx_client.StreamClosed) as closed:
            async for event in stream:
                got.append(event.signal.id)

    assert got == ["sg_7"] and connections == ["0"] and closed.value.reason == "key_revoked"


@pytest.fixture
async def streaming_url(database_url: str) -> AsyncIterator[str]:
    """The service on a loopback port, in this process (uvicorn on the tests' own event loop and
    database): its connections last long and its access checks come often, so that a revocation is
    seen on the open connection (between two connections it would be a 401 instead)."""
    settings = test_settings(database_url, stream_max_seconds=300, stream_access_check_seconds=0.1)
    application = create_app(settings, clock=Clock())
    server = uvicorn.Server(uvicorn.Config(application, host="127.0.0.1", port=0, lifespan="off", log_level="warning"))
    serving = asyncio.create_task(server.serve())
    while not server.started:
        assert not serving.done(), "the server did not start"
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await serving
        await application.state.signal_broker.stop()
        await application.state.database.dispose()


async def test_revoking_the_key_mid_stream_ends_it_with_stream_closed(
    streaming_url: str, factory: Factory, admin: httpx.AsyncClient
) -> None:
    """Against the real service over a socket: the key is revoked while its stream is open; the
    stream yields what came before, raises `StreamClosed` (key_revoked) and never connects again."""
    account = await factory.account()
    owner = vpx_client.AsyncClient(account.keys["full"], base_url=streaming_url)
    key = await owner.account.create_key("full", name="streamer")
    client = vpx_client.AsyncClient(key.secret, base_url=streaming_url)
    topic = f"closed-{uuid.uuid4().hex[:8]}"
    page = await owner.signals.list(industry="veterinary", state="SD", limit=1)
    start = page.signals[0].sequence if page.signals else 0
    got: list[str] = []

    async with owner, client, client.signals.stream(industry="veterinary", state="SD", last_event_id=start) as stream:
        sent = await ingest(admin, events("SD", 1, topic))
        with pytest.raises(vpx_client.StreamClosed) as closed:
            async for event in stream:
                got.append(event.signal.id)
                await owner.account.revoke_key(key.id)

    assert got == sent and len(sent) == 1
    assert closed.value.reason == "key_revoked" and closed.value.detail
    assert stream.connections == 1 and stream.closed_reason == "key_revoked"
