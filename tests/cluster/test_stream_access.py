"""Two server processes on one database (SQLite or PostgreSQL): a signal stream open on one ends within
5 s when its key is revoked through the other's API (D23, D28), with `event: closed` (`key_revoked`)
and nothing after it. Neither process tells the other: the stream's process finds the revocation in
the database."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from tests.conftest import test_settings
from tests.dashboard.live_server import live_server
from tests.signals.access_support import (
    API_STREAM,
    SERVER_SETTINGS,
    feeding,
    ingest_one,
    new_customer,
    watching,
    web_client,
)
from vpx.db import Database

pytestmark = pytest.mark.asyncio


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[Database]:
    found = Database(test_settings(database_url), pool=False)
    yield found
    await found.dispose()


async def test_a_key_revoked_through_another_process_ends_its_stream(database_url: str, database: Database) -> None:
    customer = await new_customer(database, "streaming", "manager")
    with (
        live_server(database_url, **SERVER_SETTINGS) as streaming_server,
        live_server(database_url, **SERVER_SETTINGS) as other_server,
    ):
        async with (
            web_client(streaming_server.url) as http,
            web_client(other_server.url) as other,
            watching(http, API_STREAM, customer.headers("streaming")) as stream,
        ):
            await ingest_one(http)
            await stream.first_signal()
            async with feeding(other):  # signals ingested through the other process, too
                revoked = await other.delete(
                    f"/api/v1/keys/{customer.key_ids['streaming']}", headers=customer.headers("manager")
                )
                assert revoked.status_code == 200 and revoked.json()["status"] == "revoked", revoked.text
                at = time.monotonic()
                assert await stream.closed_after(at) == "key_revoked"
