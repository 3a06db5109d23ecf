"""A replica that cannot be reached (refused, or silent until the connect timeout) costs the request
nothing but time: the read runs on the primary in the same request, one warning for the outage, and
the replica is left alone for a while. Without replicas, replica-safe reads are the primary's
ordinary reads."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator

import pytest
from fastapi import FastAPI

from tests.conftest import START, asgi_client, test_settings
from tests.factories import Factory
from vpx import replicas as replica_module
from vpx.app import create_app
from vpx.clock import FixedClock

pytestmark = pytest.mark.asyncio

SECRET = "Pa55wordMarker"


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that takes connections (the kernel's backlog) and never says a word."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield int(sock.getsockname()[1])


@pytest.fixture
def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed on leaving: connections are refused


async def _app_with_replica(database_url: str, port: int) -> FastAPI:
    replica = f"postgresql+asyncpg://vpx:{SECRET}@127.0.0.1:{port}/vpx"
    return create_app(test_settings(database_url, database_replica_urls=[replica]), clock=FixedClock(START))


@pytest.fixture
def logged(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    logger = logging.getLogger("vpx.replicas")
    logger.addHandler(caplog.handler)  # the vpx loggers may not propagate to the root logger
    caplog.set_level(logging.INFO, logger="vpx.replicas")
    try:
        yield caplog
    finally:
        logger.removeHandler(caplog.handler)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    unique = {id(record): record for record in caplog.records}.values()
    return [record.getMessage() for record in unique if record.levelno == logging.WARNING]


@pytest.mark.parametrize("kind", ["refused", "silent"])
async def test_an_unreachable_replica_leaves_reads_to_the_primary_with_one_warning(
    database_url: str,
    kind: str,
    closed_port: int,
    silent_port: int,
    logged: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if database_url.startswith("sqlite"):
        pytest.skip("replicas are PostgreSQL's")
    monkeypatch.setattr(replica_module, "CONNECT_TIMEOUT_SECONDS", 0.3)  # read when the engine is made
    app = await _app_with_replica(database_url, closed_port if kind == "refused" else silent_port)
    try:
        factory = Factory(app, FixedClock(START))
        await factory.contact(business_name=f"Fallback {kind.title()} Plumbing")
        account = await factory.account()
        async with asgi_client(app) as client:
            for _ in range(3):
                search = await client.get("/api/v1/contacts/search", params={"q": kind}, headers=account.headers())
                assert search.status_code == 200, search.text
                assert [c["business_name"] for c in search.json()["contacts"]] == [f"Fallback {kind.title()} Plumbing"]
                signals = await client.get("/api/v1/signals", headers=account.headers())
                assert signals.status_code == 200, signals.text
        [warning] = _warnings(logged)
        assert "failed" in warning and "127.0.0.1" in warning and SECRET not in warning
        assert ("TimeoutError" in warning) == (kind == "silent")
        assert app.state.database.replicas.replicas[0].resume_at > 0  # left alone for a while
    finally:
        await app.state.database.dispose()


async def test_without_replicas_replica_safe_reads_are_the_primarys_reads(app: FastAPI) -> None:
    database = app.state.database
    assert database.replicas is None

    async def which(connection: object) -> object:
        return getattr(connection, "engine", None)

    assert await database.replica_read(which) is database.read_engine
