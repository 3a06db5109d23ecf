"""Per-key request budgets and per-address failed-key budgets (D7), in memory or in Redis."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, parse
from limits.aio.strategies import FixedWindowRateLimiter
from limits.storage import storage_from_string

from vpx.config import Settings


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    headers: dict[str, str]
    retry_after: int


class RateLimits:
    """Fixed windows per key (policy "default") and per client address for failed keys ("auth")."""

    def __init__(self, settings: Settings) -> None:
        if settings.redis_url:
            url = "async+" + settings.redis_url if not settings.redis_url.startswith("async+") else settings.redis_url
            storage = storage_from_string(url, implementation="redispy", key_prefix="vpx-limits")
        else:
            storage = storage_from_string("async+memory://")
        self.storage = storage
        self.limiter = FixedWindowRateLimiter(storage)
        self.per_key = parse(settings.rate_limit)
        self.auth_failures = parse(settings.auth_failure_rate_limit)

    async def hit_key(self, key_id: str) -> Verdict:
        return await self._hit("default", self.per_key, "key", key_id)

    async def failures_exhausted(self, address: str) -> Verdict | None:
        """A refusing verdict when this address has used up its failed attempts, else None."""
        stats = await self.limiter.get_window_stats(self.auth_failures, "auth", address)
        if stats.remaining > 0:
            return None
        return self._verdict("auth", self.auth_failures, False, 0, stats.reset_time)

    async def record_failure(self, address: str) -> Verdict:
        return await self._hit("auth", self.auth_failures, "auth", address)

    async def _hit(self, policy: str, item: RateLimitItem, *identifiers: str) -> Verdict:
        ok = await self.limiter.hit(item, *identifiers)
        stats = await self.limiter.get_window_stats(item, *identifiers)
        return self._verdict(policy, item, ok, stats.remaining, stats.reset_time)

    @staticmethod
    def _verdict(policy: str, item: RateLimitItem, ok: bool, remaining: int, reset_time: float) -> Verdict:
        reset = max(0, math.ceil(reset_time - time.time()))
        headers = {
            "RateLimit-Policy": f'"{policy}";q={item.amount};w={item.get_expiry()}',
            "RateLimit": f'"{policy}";r={max(0, remaining)};t={reset}',
        }
        if not ok:
            headers["Retry-After"] = str(max(1, reset))
        return Verdict(allowed=ok, headers=headers, retry_after=max(1, reset))
