"""Sign-in and sign-up budgets, on the same rate-limit storage as the API (memory, or Redis shared by
every server process)."""

from __future__ import annotations

from fastapi import Request
from limits import parse

from vpx.auth import network
from vpx.errors import RateLimited


def client_address(request: Request) -> str:
    """The caller's address as D6 defines it (the TCP peer, or a trusted proxy's X-Forwarded-For)."""
    state = request.app.state
    address = network.client_address(
        request.client.host if request.client else None,
        request.headers.get("x-forwarded-for"),
        state.trusted_proxies,
    )
    return address or "unknown"


async def spend_attempt(request: Request, budget: str, *identifiers: str) -> None:
    """Counts one attempt against ``budget`` for each identifier; 429 when any is used up."""
    limits = request.app.state.rate_limits
    item = parse(budget)
    for identifier in identifiers:
        verdict = await limits.spend(item, "dashboard", identifier, policy="dashboard")
        if not verdict.allowed:
            retry = verdict.retry_after
            raise RateLimited(f"Too many attempts; try again in {retry} seconds.", headers={"Retry-After": str(retry)})
