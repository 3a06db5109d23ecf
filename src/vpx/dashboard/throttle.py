"""Sign-in, sign-up and reset budgets, on the same rate-limit storage as the API (memory, or Redis shared
by every server process).

A counter is named by what it counts and a keyed hash of whom (an email or a client address): Redis
never holds the address itself, and the hash cannot be reversed by hashing a list of likely addresses
without the key. The key is derived from the service's secret keys (vpx.secrets), so every process
that shares them counts the same address under the same name.
"""

from __future__ import annotations

import hashlib
import hmac

from fastapi import Request
from limits import parse

from vpx.auth import network
from vpx.errors import RateLimited
from vpx.secrets.box import SecretBox

HASH_PURPOSE = "dashboard rate-limit counters"


def client_address(request: Request) -> str:
    """The caller's address as D6 defines it (the TCP peer, or a trusted proxy's X-Forwarded-For)."""
    state = request.app.state
    address = network.client_address(
        request.client.host if request.client else None,
        request.headers.get("x-forwarded-for"),
        state.trusted_proxies,
    )
    return address or "unknown"


def counter_name(box: SecretBox, kind: str, who: str) -> str:
    """``kind:`` and 128 bits of HMAC-SHA256 of ``who``."""
    key = box.derive_key(HASH_PURPOSE)
    return f"{kind}:{hmac.new(key, who.encode(), hashlib.sha256).hexdigest()[:32]}"


async def spend_attempt(request: Request, budget: str, *counted: tuple[str, str]) -> None:
    """Counts one attempt against ``budget`` for each (kind, who) pair, such as ("login-email",
    email); 429 when any is used up."""
    state = request.app.state
    item = parse(budget)
    for kind, who in counted:
        verdict = await state.rate_limits.spend(
            item, "dashboard", counter_name(state.secrets, kind, who), policy="dashboard"
        )
        if not verdict.allowed:
            retry = verdict.retry_after
            raise RateLimited(f"Too many attempts; try again in {retry} seconds.", headers={"Retry-After": str(retry)})
