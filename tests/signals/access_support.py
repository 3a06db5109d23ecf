"""Helpers for the tests of a stream's access while it is open: customers, keys and dashboard
sessions written through the services, evidence sent to a server's admin API, sign-out through a real
server, and an open SSE stream read to its end."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
from httpx_sse import ServerSentEvent, aconnect_sse

from vpx.accounts import service as account_service
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.dashboard import sessions as dashboard_sessions
from vpx.db import Database

API_STREAM = "/api/v1/signals/stream"
DASHBOARD_STREAM = "/dashboard/signals/stream"
ADMIN_TOKEN = "stream-access-test-admin-token-0123456789"
# What the servers of these tests run with: a quick SQLite poll, the admin API for ingesting, plain-HTTP
# cookies. The access check keeps its default interval: the 5 s promise is tested.
SERVER_SETTINGS = {"stream_poll_seconds": "0.1", "admin_token": ADMIN_TOKEN, "dashboard_plain_http": "1"}
CLOSE_WITHIN_S = 5.0  # the promise: a stream ends within 5 s of the access that opened it
WAIT_S = 15.0
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


@dataclass(frozen=True)
class Customer:
    id: str
    key_ids: dict[str, str]
    secrets: dict[str, str]

    def headers(self, key_type: str = "full") -> dict[str, str]:
        return {"X-API-Key": self.secrets[key_type]}


async def add_keys(database: Database, account_id: str, *names: str, **allowlists: list[str]) -> Customer:
    """Full Access keys named ``names`` for the account (``<name>=[addresses]`` gives one an allow-list)."""
    now = datetime.now(UTC)
    key_ids, secrets = {}, {}
    async with database.write_sessions() as session, session.begin():
        for name in names:
            key, secrets[name] = await key_service.create_key(
                session, account_id=account_id, key_type=KeyType.full, name=name,
                ip_allowlist=allowlists.get(name, []), now=now, settings=database.settings,
            )  # fmt: skip
            key_ids[name] = key.id
    return Customer(account_id, key_ids, secrets)


async def new_customer(database: Database, *names: str) -> Customer:
    """An account with a Full Access key for each name (``full`` when none is named)."""
    async with database.write_sessions() as session, session.begin():
        account = await account_service.create_account(
            session, name="stream access test", email=None, plan="free", now=datetime.now(UTC),
            settings=database.settings,
        )  # fmt: skip
    return await add_keys(database, account.id, *(names or ("full",)))


async def ingest_one(http: httpx.AsyncClient, *, topic: str = "access test") -> None:
    """One available signal, through the server's admin API (D36)."""
    body = [
        {
            "category": "switching_intent",
            "industry": "home-services",
            "observed_at": datetime.now(UTC).isoformat(),
            "business": {"name": "Acme Plumbing LLC", "city": "Denver", "state": "CO", "phone": "+13035550100"},
            "evidence": {"interest": "crm"},
            "topic": topic,
            "source_record_id": uuid.uuid4().hex,
        }
    ]
    answer = await http.post("/api/v1/admin/signals", json=body, headers={"X-Admin-Token": ADMIN_TOKEN})
    assert answer.status_code == 200 and answer.json()["ingested"] == 1, answer.text


@contextlib.asynccontextmanager
async def feeding(http: httpx.AsyncClient, every_s: float = 0.25) -> AsyncIterator[None]:
    """Signals keep coming while the block runs, so that a stream that were still open would get some."""

    async def feed() -> None:
        while True:
            await ingest_one(http, topic="while access ends")
            await asyncio.sleep(every_s)

    task = asyncio.create_task(feed())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@dataclass
class Watched:
    """An open stream, its events noted with when they arrived, read by a background task to its end."""

    events: list[tuple[float, ServerSentEvent]] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    opened: asyncio.Event = field(default_factory=asyncio.Event)
    ended: asyncio.Event = field(default_factory=asyncio.Event)

    async def first_signal(self) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT_S
        while True:
            for _, sse in self.events:
                if sse.event == "signal":
                    found: dict[str, Any] = json.loads(sse.data)
                    return found
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), timeout=max(0.01, deadline - time.monotonic()))

    async def closed_after(self, since: float) -> str:
        """Waits for the stream to end; it must end with one `closed` event, within 5 s of ``since``
        (when the access ended), and have nothing after it. Its reason."""
        await asyncio.wait_for(self.ended.wait(), timeout=WAIT_S)
        closing = [(at, sse) for at, sse in self.events if sse.event == "closed"]
        assert len(closing) == 1, [sse for _, sse in self.events]
        at, sse = closing[0]
        assert self.events[-1][1] is sse, "something was sent after the closed event"
        assert at - since <= CLOSE_WITHIN_S, f"closed {at - since:.1f} s after the access ended"
        reason: str = json.loads(sse.data)["reason"]
        return reason


async def _read(http: httpx.AsyncClient, path: str, headers: dict[str, str], watched: Watched) -> None:
    try:
        async with aconnect_sse(http, "GET", path, headers=headers) as source:
            assert source.response.status_code == 200, await source.response.aread()
            async for sse in source.aiter_sse():
                watched.events.append((time.monotonic(), sse))
                watched.opened.set()
                watched.arrived.set()
    finally:
        watched.ended.set()


@contextlib.asynccontextmanager
async def watching(http: httpx.AsyncClient, path: str, headers: dict[str, str] | None = None) -> AsyncIterator[Watched]:
    """A stream open (its first message received) for the block."""
    watched = Watched()
    task = asyncio.create_task(_read(http, path, headers or {}, watched))
    try:
        await asyncio.wait_for(watched.opened.wait(), timeout=WAIT_S)
        yield watched
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


def web_client(url: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(30, read=None))


async def _token(http: httpx.AsyncClient, page: str) -> str:
    response = await http.get(page)
    found = TOKEN.search(response.text)
    assert found, f"no CSRF token on {page} ({response.status_code})"
    return found.group(1)


async def sign_in(http: httpx.AsyncClient, database: Database) -> str:
    """A new account, and the browser ``http`` signed in to it (a dashboard session, as signing in
    makes); the account's id."""
    now = datetime.now(UTC)
    async with database.write_sessions() as session, session.begin():
        account = await account_service.create_account(
            session, name="stream access test", email=f"stream-{uuid.uuid4().hex[:10]}@example.com", plan="free",
            now=now, settings=database.settings,
        )  # fmt: skip
        token = await dashboard_sessions.start_session(
            session, account_id=account.id, now=now, settings=database.settings
        )
    http.cookies.set(dashboard_sessions.SESSION_COOKIE, token)
    return account.id


async def sign_out(http: httpx.AsyncClient) -> None:
    response = await http.post("/dashboard/logout", data={"csrf_token": await _token(http, "/dashboard")})
    assert response.status_code == 303, response.text
