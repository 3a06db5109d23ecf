"""D7: per-key budgets with IETF RateLimit headers, 429 with Retry-After, stricter limits on failed
keys per address, and one shared budget across processes when Redis is configured."""

from __future__ import annotations

import asyncio
import re
import uuid

import pytest
import redis.asyncio as aioredis

from tests.conftest import asgi_client, test_settings
from tests.factories import Factory
from vpx.app import create_app
from vpx.auth.keys import KeyType, generate_key
from vpx.auth.ratelimit import MemoryWindows, RateLimits, RedisWindows, Windows
from vpx.clock import FixedClock

REDIS_URL = "redis://127.0.0.1:6379/0"


async def _require_redis() -> None:
    """Skips the test, saying why, where no Redis answers at REDIS_URL."""
    try:
        probe = aioredis.from_url(REDIS_URL)
        await probe.ping()
        await probe.aclose()
    except Exception as exc:
        pytest.skip(f"Redis not reachable at {REDIS_URL}: {exc}")


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
    await _require_redis()
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


async def test_an_address_out_of_failed_attempts_still_serves_good_keys(database_url: str, clock: FixedClock) -> None:
    """D7 (docs/decisions.md): after its failed attempts are used up, an address gets 429 for further
    unrecognised keys only; a recognised key from it (another client behind the same NAT) is served."""
    app = create_app(test_settings(database_url, auth_failure_rate_limit="30/minute"), clock=clock)
    factory = Factory(app, clock)
    from tests.conftest import wipe

    await wipe(app.state.database)
    account = await factory.account(key_types=("ro", "live"))
    async with asgi_client(app, client_ip="198.51.100.60") as http:
        wrong = [
            (await http.get("/api/v1/account", headers={"X-API-Key": generate_key(KeyType.ro)})).status_code
            for _ in range(32)
        ]
        assert wrong == [401] * 30 + [429, 429]
        for kind in ("ro", "live", "ro"):
            good = await http.get("/api/v1/account", headers=account.headers(kind))
            assert good.status_code == 200, good.text
            assert good.headers["RateLimit"].startswith('"default";')
        again = await http.get("/api/v1/account", headers={"X-API-Key": generate_key(KeyType.live)})
        assert again.status_code == 429 and again.json()["code"] == "rate_limited"
        assert again.headers["RateLimit"].startswith('"auth";r=0;')
        malformed = await http.get("/api/v1/account", headers={"X-API-Key": "vpx_ro_nonsense"})
        assert malformed.status_code == 429
    await app.state.database.dispose()


async def test_customers_bad_keys_never_lock_the_operator_out(database_url: str, clock: FixedClock) -> None:
    """Failed operator tokens and customers' failed keys have budgets of their own per address: bad keys
    from an office's shared address leave the operator's token working, and bad tokens are still limited."""
    token = "operator-token-for-the-budget-test"
    settings = test_settings(
        database_url, auth_failure_rate_limit="3/minute", admin_failure_rate_limit="2/minute", admin_token=token
    )
    app = create_app(settings, clock=clock)
    async with asgi_client(app, client_ip="198.51.100.70") as http:
        keys = [
            (await http.get("/api/v1/account", headers={"X-API-Key": generate_key(KeyType.live)})).status_code
            for _ in range(4)
        ]
        assert keys == [401, 401, 401, 429]  # the customers' budget is used up at this address
        admin = await http.get("/api/v1/admin/accounts", headers={"X-Admin-Token": token})
        assert admin.status_code == 200, admin.text
        wrong = [
            (await http.get("/api/v1/admin/accounts", headers={"X-Admin-Token": "not-the-token-0123456789"}))
            for _ in range(3)
        ]
        assert [r.status_code for r in wrong] == [403, 403, 429]
        assert wrong[0].headers["RateLimit-Policy"] == '"admin";q=2;w=60'
        assert wrong[2].json()["code"] == "rate_limited" and int(wrong[2].headers["Retry-After"]) >= 1
        # Out of tokens to try, the address waits, even with the right one; a customer's bad key still
        # meets the customers' budget, not the operators'.
        assert (await http.get("/api/v1/admin/accounts", headers={"X-Admin-Token": token})).status_code == 429
        again = await http.get("/api/v1/account", headers={"X-API-Key": generate_key(KeyType.live)})
        assert again.headers["RateLimit"].startswith('"auth";r=0;')
    async with asgi_client(app, client_ip="198.51.100.71") as elsewhere:
        assert (await elsewhere.get("/api/v1/admin/accounts", headers={"X-Admin-Token": token})).status_code == 200
    await app.state.database.dispose()


@pytest.mark.parametrize("store", ["memory", "redis"])
async def test_both_stores_count_windows_alike(store: str) -> None:
    """The in-process and the Redis counters: hits, a guard that stops counting, looks, resets."""
    if store == "redis":
        await _require_redis()
        windows: Windows = RedisWindows(REDIS_URL)
    else:
        windows = MemoryWindows()
    prefix = f"test/{uuid.uuid4()}/"
    counts = [(await windows.hit(prefix + "key", 60)).count for _ in range(3)]
    assert counts == [1, 2, 3]
    looked = await windows.look(prefix + "key")
    assert looked.count == 3 and 0 < looked.reset_in <= 60
    assert (await windows.look(prefix + "never")).count == 0
    guard = (prefix + "key", 3)  # already at its limit: nothing more is counted
    refused = await windows.hit(prefix + "other", 60, guard)
    assert refused.refused and refused.count == 3
    assert (await windows.look(prefix + "other")).count == 0
    assert not (await windows.hit(prefix + "other", 60, (prefix + "key", 4))).refused
    short = await windows.hit(prefix + "short", 1)
    assert short.count == 1 and short.reset_in <= 1
    await asyncio.sleep(1.1)
    assert (await windows.hit(prefix + "short", 1)).count == 1  # a new window


async def test_the_redis_store_closes_its_connections_at_shutdown(database_url: str) -> None:
    await _require_redis()
    probe = aioredis.from_url(REDIS_URL)
    name = f"vpx-test-{uuid.uuid4().hex[:12]}"
    limits = RateLimits(test_settings(database_url, redis_url=f"{REDIS_URL}?client_name={name}"))

    async def connected() -> int:
        return sum(1 for client in await probe.client_list() if client.get("name") == name)

    await limits.windows.hit("key_closing", 60)
    assert await connected() == 1
    await limits.close()
    assert await connected() == 0
    await probe.aclose()
