"""The dashboard's rate-limit counters in Redis hold no email address and no client address: each is a
keyed hash (HMAC under a key derived from the service's secret keys), the same in every process."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis
from fastapi import FastAPI

from tests.auth.test_rate_limits import REDIS_URL, _require_redis
from tests.dashboard.conftest import Browser, browser

MakeApp = Callable[..., Awaitable[FastAPI]]


def _address() -> str:
    """A client address of its own: counters outlive a test by their window."""
    return f"2001:db8::{uuid.uuid4().hex[:4]}:{uuid.uuid4().hex[:4]}"


async def _keys(client: aioredis.Redis) -> list[str]:
    return [key.decode() async for key in client.scan_iter(match="vpx-limits:*")]


async def test_limit_keys_in_redis_hold_no_address(make_app: MakeApp) -> None:
    await _require_redis()
    email = f"private-{uuid.uuid4().hex[:8]}@example.com"
    address = _address()
    app = await make_app(redis_url=REDIS_URL, login_rate_limit="5/minute", password_reset_rate_limit="5/hour")
    client = aioredis.from_url(REDIS_URL)
    try:
        before = set(await _keys(client))
        async with browser(app, address) as http:
            web = Browser(http)
            assert (await web.sign_in(email, "a wrong password")).status_code == 401
            await web.submit("/dashboard/forgot", "/dashboard/forgot", {"email": email})
        added = set(await _keys(client)) - before
    finally:
        await client.aclose()
        await app.state.rate_limits.close()
    assert len(added) == 4, added  # sign-in and reset, each per address and per email
    assert any("login-email:" in key for key in added) and any("reset-ip:" in key for key in added)
    plain = [hashlib.sha256(value.encode()).hexdigest()[:16] for value in (email, address)]
    for key in added:
        assert email not in key and address not in key and not any(p in key for p in plain), key


async def test_every_process_counts_the_same_email_under_the_same_key(make_app: MakeApp) -> None:
    await _require_redis()
    email = f"shared-{uuid.uuid4().hex[:8]}@example.com"
    first = await make_app(redis_url=REDIS_URL, login_rate_limit="2/minute")
    second = await make_app(redis_url=REDIS_URL, login_rate_limit="2/minute")
    try:
        async with browser(first, _address()) as one, browser(second, _address()) as two:
            assert (await Browser(one).sign_in(email, "guess 1")).status_code == 401
            assert (await Browser(two).sign_in(email, "guess 2")).status_code == 401
            assert (await Browser(two).sign_in(email, "guess 3")).status_code == 429
    finally:
        await first.state.rate_limits.close()
        await second.state.rate_limits.close()
