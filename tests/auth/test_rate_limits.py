"""D7: per-key budgets with IETF RateLimit headers, 429 with Retry-After, stricter limits on failed
keys per address, and one shared budget across processes when Redis is configured."""

from __future__ import annotations

import re
import uuid

import pytest
import redis.asyncio as aioredis

from tests.conftest import asgi_client, test_settings
from tests.factories import Factory
from vpx.app import create_app
from vpx.auth.keys import KeyType, generate_key
from vpx.clock import FixedClock

REDIS_URL = "redis://127.0.0.1:6379/0"


async def test_every_response_carries_the_rate_limit_headers(database_url: str, clock: FixedClock) -> None:
    app = create_app(test_settings(database_url, rate_limit="5/minute"), clock=clock)
    factory = Factory(app, clock)
    from tests.conftest import wipe

    await wipe(app.state.database)
    account = await factory.account(key_types=("ro",))
    async with asgi_client(app) as http:
        statuses = []
        for _ in range(7):
            response = await http.get("/api/v1/account", headers=account.headers("ro"))
            statuses.append(response.status_code)
            assert response.headers["RateLimit-Policy"] == '"default";q=5;w=60'
            assert re.fullmatch(r'"default";r=\d+;t=\d+', response.headers["RateLimit"])
        assert statuses == [200] * 5 + [429] * 2
        assert response.json()["code"] == "rate_limited"
        assert 1 <= int(response.headers["Retry-After"]) <= 60
        assert response.headers["RateLimit"].startswith('"default";r=0;')
    await app.state.database.dispose()


async def test_failed_keys_are_limited_per_address(database_url: str, clock: FixedClock) -> None:
    app = create_app(test_settings(database_url, auth_failure_rate_limit="3/minute"), clock=clock)
    async with asgi_client(app, client_ip="198.51.100.50") as http:
        statuses = [
            (await http.get("/api/v1/account", headers={"X-API-Key": generate_key(KeyType.live)})).status_code
            for _ in range(5)
        ]
        assert statuses[:3] == [401, 401, 401]
        assert statuses[3:] == [429, 429]
    async with asgi_client(app, client_ip="198.51.100.51") as other:
        response = await other.get("/api/v1/account", headers={"X-API-Key": generate_key(KeyType.live)})
        assert response.status_code == 401  # another address has its own budget
    await app.state.database.dispose()


async def test_budget_is_shared_across_processes_through_redis(database_url: str, clock: FixedClock) -> None:
    try:
        probe = aioredis.from_url(REDIS_URL)
        await probe.ping()
        await probe.aclose()
    except Exception as exc:
        pytest.skip(f"Redis not reachable at {REDIS_URL}: {exc}")
    settings = test_settings(database_url, rate_limit="4/minute", redis_url=REDIS_URL)
    one, two = create_app(settings, clock=clock), create_app(settings, clock=clock)
    from tests.conftest import wipe

    await wipe(one.state.database)
    factory = Factory(one, clock)
    account = await factory.account(key_types=("ro",), name=f"redis {uuid.uuid4()}")
    statuses = []
    async with asgi_client(one) as a, asgi_client(two) as b:
        for http in (a, b, a, b, a, b):
            statuses.append((await http.get("/api/v1/account", headers=account.headers("ro"))).status_code)
    assert statuses == [200, 200, 200, 200, 429, 429]
    for app in (one, two):
        await app.state.database.dispose()
