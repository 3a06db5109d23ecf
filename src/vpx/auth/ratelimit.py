"""Per-key request budgets and per-address failed-key budgets (D7), in memory or in Redis.

Fixed windows that start at a counter's first hit (as the ``limits`` library counts them; its
``parse`` reads the settings' "600/minute" notation). The counting is our own, in one small
interface with two stores, because an authenticated request must cost one round trip to Redis:
with ``limits``' limiter it cost five (hit the key, read its count and expiry, read the address's
failures and their expiry), 0.44 ms a request, a third of a search's time.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any, Protocol

from limits import RateLimitItem, parse

from vpx.config import Settings

log = logging.getLogger("vpx")


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    headers: dict[str, str]
    retry_after: int
    policy: str = "default"


@dataclass(frozen=True)
class Count:
    """A window's count after a hit (or a look), and seconds until it resets. ``refused``: the guard
    counter was already at its limit, so nothing was counted."""

    count: int
    reset_in: float
    refused: bool = False


class Windows(Protocol):
    async def hit(self, key: str, window: int, guard: tuple[str, int] | None = None) -> Count:
        """Counts one hit of ``key`` in its window, unless ``guard`` (another key, its limit) is
        used up, in which case the guard's count is returned, refused."""
        ...

    async def look(self, key: str) -> Count: ...

    async def close(self) -> None:
        """Releases the store's connections (at shutdown)."""
        ...


class MemoryWindows:
    """One process's counters."""

    def __init__(self) -> None:
        self.counters: dict[str, list[float]] = {}  # key: [count, resets at (epoch seconds)]
        self.hits_since_sweep = 0

    def _current(self, key: str, now: float) -> list[float] | None:
        counter = self.counters.get(key)
        if counter is not None and counter[1] <= now:
            del self.counters[key]
            return None
        return counter

    async def hit(self, key: str, window: int, guard: tuple[str, int] | None = None) -> Count:
        now = time.time()
        if guard is not None:
            guarding = self._current(guard[0], now)
            if guarding is not None and guarding[0] >= guard[1]:
                return Count(int(guarding[0]), guarding[1] - now, refused=True)
        counter = self._current(key, now)
        if counter is None:
            counter = self.counters[key] = [0, now + window]
            self._sweep(now)
        counter[0] += 1
        return Count(int(counter[0]), counter[1] - now)

    async def look(self, key: str) -> Count:
        now = time.time()
        counter = self._current(key, now)
        return Count(0, 0.0) if counter is None else Count(int(counter[0]), counter[1] - now)

    async def close(self) -> None:
        self.counters.clear()

    def _sweep(self, now: float) -> None:
        # Expired counters of keys never seen again would otherwise stay: drop them now and then.
        self.hits_since_sweep += 1
        if self.hits_since_sweep >= 10_000:
            self.hits_since_sweep = 0
            for key in [k for k, (_, resets) in self.counters.items() if resets <= now]:
                del self.counters[key]


# KEYS[1] the counter, KEYS[2] the guard (or the counter again, with no limit: ARGV[2] = -1).
_HIT = """
if tonumber(ARGV[2]) >= 0 then
  local guard = tonumber(redis.call('GET', KEYS[2]) or '0')
  if guard >= tonumber(ARGV[2]) then
    return {guard, redis.call('PTTL', KEYS[2]), 1}
  end
end
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl, 0}
"""
_LOOK = "return {tonumber(redis.call('GET', KEYS[1]) or '0'), redis.call('PTTL', KEYS[1])}"


class RedisWindows:
    """Counters shared by every server process, one Lua script (one round trip) a call."""

    PREFIX = "vpx-limits:"

    def __init__(self, url: str) -> None:
        import redis.asyncio as aioredis

        # Short timeouts: a Redis that hangs must not hang every request.
        self.client: Any = aioredis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
        self._hit = self.client.register_script(_HIT)
        self._look = self.client.register_script(_LOOK)
        # While Redis cannot be reached, this process counts on its own (a limit per process rather than
        # none, and no request refused for it), saying so in the log once a minute.
        self.fallback = MemoryWindows()
        self.warned_at = -math.inf

    def _unreachable(self, exc: Exception) -> MemoryWindows:
        if time.monotonic() - self.warned_at > 60:
            self.warned_at = time.monotonic()
            log.warning("the rate-limit store (Redis) is unreachable; counting in this process: %s", exc)
        return self.fallback

    async def hit(self, key: str, window: int, guard: tuple[str, int] | None = None) -> Count:
        from redis.exceptions import RedisError

        keys = [self.PREFIX + key, self.PREFIX + (guard[0] if guard else key)]
        try:
            count, ttl_ms, refused = await self._hit(keys=keys, args=[window * 1000, guard[1] if guard else -1])
        except (RedisError, OSError) as exc:
            return await self._unreachable(exc).hit(key, window, guard)
        return Count(int(count), max(0, int(ttl_ms)) / 1000, refused=bool(refused))

    async def look(self, key: str) -> Count:
        from redis.exceptions import RedisError

        try:
            count, ttl_ms = await self._look(keys=[self.PREFIX + key])
        except (RedisError, OSError) as exc:
            return await self._unreachable(exc).look(key)
        return Count(int(count), max(0, int(ttl_ms)) / 1000)

    async def close(self) -> None:
        await self.client.aclose()


class RateLimits:
    """Fixed windows per key (policy "default"), and per client address for failed keys ("auth") and,
    apart, for failed operator tokens ("admin")."""

    def __init__(self, settings: Settings) -> None:
        self.windows: Windows = RedisWindows(settings.redis_url) if settings.redis_url else MemoryWindows()
        self.per_key = parse(settings.rate_limit)
        self.auth_failures = parse(settings.auth_failure_rate_limit)
        # A budget of its own: customers' bad keys from an address the operator shares (an office's
        # NAT) must not lock the operator out, nor the operator's typos a customer.
        self.admin_failures = parse(settings.admin_failure_rate_limit)

    async def close(self) -> None:
        """Closes the store's connections: the server's shutdown calls it."""
        await self.windows.close()

    async def admit_key(self, key_id: str) -> Verdict:
        """A recognised key's request, counted against the key's budget. The address's failed
        attempts do not count here: one client sending bad keys behind a shared NAT or an unconfigured
        proxy must not lock out everyone else there (D7); a key's 190 random bits make a right
        guess hopeless whatever the answer to it tells."""
        return await self.hit_key(key_id)

    async def failure_unless_exhausted(self, address: str) -> Verdict:
        """A failed attempt counted, or, when the address has used them up, a refusal (nothing counted)."""
        failures = _key(self.auth_failures, "auth", address)
        counted = await self.windows.hit(
            failures, self.auth_failures.get_expiry(), (failures, self.auth_failures.amount)
        )
        return _verdict("auth", self.auth_failures, not counted.refused, counted.count, counted.reset_in)

    async def hit_key(self, key_id: str) -> Verdict:
        counted = await self.windows.hit(_key(self.per_key, "key", key_id), self.per_key.get_expiry())
        return _verdict("default", self.per_key, counted.count <= self.per_key.amount, counted.count, counted.reset_in)

    async def failures_exhausted(self, address: str) -> Verdict | None:
        """A refusing verdict when this address has used up its failed attempts, else None."""
        seen = await self.windows.look(_key(self.auth_failures, "auth", address))
        if seen.count < self.auth_failures.amount:
            return None
        return _verdict("auth", self.auth_failures, False, seen.count, seen.reset_in)

    async def record_failure(self, address: str) -> Verdict:
        return await self.spend(self.auth_failures, "auth", address, policy="auth")

    async def admin_failures_exhausted(self, address: str) -> Verdict | None:
        """A refusing verdict when this address has used up its failed operator tokens, else None."""
        seen = await self.windows.look(_key(self.admin_failures, "admin", address))
        if seen.count < self.admin_failures.amount:
            return None
        return _verdict("admin", self.admin_failures, False, seen.count, seen.reset_in)

    async def record_admin_failure(self, address: str) -> Verdict:
        return await self.spend(self.admin_failures, "admin", address, policy="admin")

    async def spend(self, item: RateLimitItem, namespace: str, identifier: str, *, policy: str) -> Verdict:
        """One hit of a budget (sign-in attempts, failed keys…); the verdict says whether it fitted."""
        counted = await self.windows.hit(_key(item, namespace, identifier), item.get_expiry())
        return _verdict(policy, item, counted.count <= item.amount, counted.count, counted.reset_in)


def _key(item: RateLimitItem, namespace: str, identifier: str) -> str:
    return item.key_for(namespace, identifier)


def _verdict(policy: str, item: RateLimitItem, ok: bool, count: int, reset_in: float) -> Verdict:
    reset = max(0, math.ceil(reset_in))
    headers = {
        "RateLimit-Policy": f'"{policy}";q={item.amount};w={item.get_expiry()}',
        "RateLimit": f'"{policy}";r={max(0, item.amount - count)};t={reset}',
    }
    if not ok:
        headers["Retry-After"] = str(max(1, reset))
    return Verdict(allowed=ok, headers=headers, retry_after=max(1, reset), policy=policy)
