"""An open signal stream ends when the access that opened it does (D23): a revoked key, a suspended or
deleted account, a dashboard sign-out, a key whose allow-list no longer holds the stream's address.
Each is done outside the server process (through the services, as the CLI and the admin API do, or
through the dashboard), and the stream, read by a real SSE client while signals keep coming, gets one
`event: closed` naming the reason within 5 s, and nothing after it."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import pytest

from tests.conftest import test_settings
from tests.dashboard.live_server import LiveServer, live_server
from tests.signals.access_support import (
    API_STREAM,
    DASHBOARD_STREAM,
    SERVER_SETTINGS,
    add_keys,
    feeding,
    ingest_one,
    new_customer,
    sign_in,
    sign_out,
    watching,
    web_client,
)
from vpx.accounts import lifecycle
from vpx.auth import service as key_service
from vpx.db import Database

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[LiveServer]:
    """One server for the module: each test makes its own accounts, and signals only ever accumulate."""
    with live_server(database_url, **SERVER_SETTINGS) as live:
        yield live


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[Database]:
    """The server's database, as another process (the CLI, the operator's API) changes it."""
    found = Database(test_settings(database_url), pool=False)
    yield found
    await found.dispose()


async def test_a_revoked_keys_stream_is_closed(server: LiveServer, database: Database) -> None:
    customer = await new_customer(database, "streaming", "other")
    async with (
        web_client(server.url) as http,
        watching(http, API_STREAM, customer.headers("streaming")) as stream,
        watching(http, API_STREAM, customer.headers("other")) as untouched,
    ):
        await ingest_one(http)
        await stream.first_signal()
        async with feeding(http):
            async with database.write_sessions() as session, session.begin():
                await key_service.revoke_key(session, key_id=customer.key_ids["streaming"], now=datetime.now(UTC))
            revoked = time.monotonic()
            assert await stream.closed_after(revoked) == "key_revoked"
        # The account's other key streams on.
        assert not untouched.ended.is_set()
        assert [sse.event for _, sse in untouched.events].count("closed") == 0


async def test_a_suspended_accounts_streams_are_closed(server: LiveServer, database: Database) -> None:
    """Its keys' streams and its dashboard's live view alike."""
    async with web_client(server.url) as browser, web_client(server.url) as http:
        customer = await add_keys(database, await sign_in(browser, database), "full")
        async with (
            watching(http, API_STREAM, customer.headers()) as api,
            watching(browser, DASHBOARD_STREAM) as dashboard,
        ):
            await ingest_one(http)
            await api.first_signal()
            await dashboard.first_signal()
            async with feeding(http):
                async with database.write_sessions() as session, session.begin():
                    await lifecycle.suspend(
                        session, account_id=customer.id, reason="test", actor="test", now=datetime.now(UTC)
                    )
                suspended = time.monotonic()
                assert await api.closed_after(suspended) == "account_suspended"
                assert await dashboard.closed_after(suspended) == "account_suspended"


async def test_a_deleted_accounts_streams_are_closed(server: LiveServer, database: Database) -> None:
    """Deletion revokes the keys and ends the sessions too; the reason names the deletion."""
    async with web_client(server.url) as browser, web_client(server.url) as http:
        customer = await add_keys(database, await sign_in(browser, database), "full")
        async with (
            watching(http, API_STREAM, customer.headers()) as api,
            watching(browser, DASHBOARD_STREAM) as dashboard,
        ):
            await ingest_one(http)
            await api.first_signal()
            await dashboard.first_signal()
            async with feeding(http):
                async with database.write_sessions() as session, session.begin():
                    await lifecycle.delete_account(session, account_id=customer.id, actor="test", now=datetime.now(UTC))
                deleted = time.monotonic()
                assert await api.closed_after(deleted) == "account_deleted"
                assert await dashboard.closed_after(deleted) == "account_deleted"


async def test_signing_out_closes_the_dashboards_live_view(server: LiveServer, database: Database) -> None:
    async with web_client(server.url) as browser, web_client(server.url) as http:
        await sign_in(browser, database)
        async with watching(browser, DASHBOARD_STREAM) as dashboard:
            await ingest_one(http)
            await dashboard.first_signal()
            async with feeding(http):
                await sign_out(browser)
                signed_out = time.monotonic()
                assert await dashboard.closed_after(signed_out) == "signed_out"
        # And the relay refuses the browser from now on.
        again = await browser.get(DASHBOARD_STREAM)
        assert again.status_code in (303, 401)


async def test_a_stream_from_an_address_the_allow_list_no_longer_holds_is_closed(
    server: LiveServer, database: Database
) -> None:
    customer = await new_customer(database)
    async with web_client(server.url) as http, watching(http, API_STREAM, customer.headers()) as stream:
        await ingest_one(http)
        await stream.first_signal()
        async with feeding(http):
            async with database.write_sessions() as session, session.begin():
                await key_service.update_key(
                    session, key_id=customer.key_ids["full"], account_id=customer.id, ip_allowlist=["203.0.113.7"]
                )
            narrowed = time.monotonic()
            assert await stream.closed_after(narrowed) == "ip_not_allowed"
