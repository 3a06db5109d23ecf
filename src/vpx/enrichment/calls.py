"""One provider call made safely: the circuit breaker, the key's rate limit (shared by every process
when Redis is configured), the month's request count, at most two retries of a rate-limited call
waiting what the provider says (Retry-After, up to 10 s), and the timeout (the HTTP client's)."""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from limits import parse

from vpx.auth.ratelimit import RateLimits
from vpx.enrichment.providers.base import (
    QUOTA_EXHAUSTED,
    RATE_LIMITED,
    TIMEOUT,
    UNAVAILABLE,
    Found,
    ProviderError,
    masked,
)

MAX_RETRIES = 2
MAX_RETRY_WAIT = 10.0
# A provider answering this many failures (5xx, timeouts) in a row is not called for COOL_OFF seconds.
BREAKER_FAILURES = 5
BREAKER_COOL_OFF = 30.0
# The longest error message an attempt shows (cut after the key is masked, never before).
MESSAGE_CHARS = 300


@dataclass
class Breaker:
    """A circuit breaker per provider and base URL, in this process."""

    failures: dict[str, int] = field(default_factory=dict)
    open_until: dict[str, float] = field(default_factory=dict)

    def is_open(self, target: str) -> float | None:
        """Seconds the circuit stays open, or None when calls may go."""
        until = self.open_until.get(target)
        if until is None:
            return None
        left = until - time.monotonic()
        if left <= 0:
            del self.open_until[target]  # half-open: the next call decides
            return None
        return left

    def failed(self, target: str) -> None:
        count = self.failures.get(target, 0) + 1
        self.failures[target] = count
        if count >= BREAKER_FAILURES:
            self.open_until[target] = time.monotonic() + BREAKER_COOL_OFF
            self.failures[target] = 0

    def succeeded(self, target: str) -> None:
        self.failures.pop(target, None)


@dataclass
class Outcome:
    """How a call ended: ``found`` (an answer or None for no match) when ``status`` is "answered";
    otherwise "rate_limited", "error" (``code``, ``message``) or "monthly_limit_reached"."""

    status: str
    found: Found | None = None
    code: str | None = None
    message: str | None = None
    requests: int = 0  # HTTP requests sent
    seconds: float = 0.0


class ProviderCalls:
    """Makes provider calls for the service: one per process (the breaker's memory)."""

    def __init__(self, limits: RateLimits, rate_limit: str, *, sleep: Callable[[float], Awaitable[None]] | None = None):
        self.limits = limits
        self.rate = parse(rate_limit)
        self.breaker = Breaker()
        self.sleep = sleep or asyncio.sleep

    async def call(
        self,
        *,
        provider: str,
        base_url: str,
        api_key: str,
        send: Callable[[], Awaitable[Found | None]],
        reserve: Callable[[], Awaitable[bool]],
    ) -> Outcome:
        """``send`` makes the HTTP request; ``reserve`` counts it in the month (False: at the limit)."""
        target = f"{provider} {base_url}"
        started = time.perf_counter()
        outcome = Outcome("error")
        sent = 0
        left = self.breaker.is_open(target)
        if left is not None:
            return Outcome(
                "error",
                code=UNAVAILABLE,
                message=f"{provider} failed {BREAKER_FAILURES} times in a row; not called for another {left:.0f} s",
            )
        # The key's budget is counted under a digest of the key: never the key itself in the store.
        identifier = hashlib.sha256(f"{provider}\x1f{api_key}".encode()).hexdigest()[:32]
        for attempt in range(MAX_RETRIES + 1):
            verdict = await self.limits.spend(self.rate, "enrich", identifier, policy="enrichment")
            if not verdict.allowed:
                if attempt == MAX_RETRIES or verdict.retry_after > MAX_RETRY_WAIT:
                    outcome = Outcome(
                        "rate_limited", code=RATE_LIMITED, message="the key's request rate is used up", requests=sent
                    )
                    break
                await self.sleep(verdict.retry_after)
                continue
            if not await reserve():
                outcome = Outcome("monthly_limit_reached", requests=sent)
                break
            sent += 1
            try:
                found = await send()
            except ProviderError as error:
                if error.code == RATE_LIMITED and attempt < MAX_RETRIES:
                    await self.sleep(
                        min(error.retry_after if error.retry_after is not None else 2.0**attempt, MAX_RETRY_WAIT)
                    )
                    continue
                if error.code in (UNAVAILABLE, TIMEOUT):
                    self.breaker.failed(target)
                status = "rate_limited" if error.code == RATE_LIMITED else "error"
                message = masked(error.message, api_key)[:MESSAGE_CHARS]
                outcome = Outcome(status, code=error.code, message=message, requests=sent)
                break
            self.breaker.succeeded(target)
            outcome = Outcome("answered", found=found, requests=sent)
            break
        outcome.seconds = time.perf_counter() - started
        return outcome


__all__ = ["QUOTA_EXHAUSTED", "Breaker", "Outcome", "ProviderCalls"]
