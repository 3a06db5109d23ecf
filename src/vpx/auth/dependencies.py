"""The authentication dependency: key format, lookup, IP allow-list, rate limit, permission —
in that order (D3, D6, D7, D4)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader

from vpx.auth import network
from vpx.auth import service as key_service
from vpx.auth.keys import LABELS, KeyType, parse_key
from vpx.auth.permissions import Capability, allows, needed_key_types
from vpx.auth.ratelimit import Verdict
from vpx.errors import (
    ACCOUNT_SUSPENDED,
    AccountSuspended,
    InsufficientPermission,
    InvalidApiKey,
    IpNotAllowed,
    ProblemError,
    RateLimited,
)

LAST_USED_RESOLUTION = timedelta(minutes=1)

api_key_header = APIKeyHeader(
    name="X-API-Key",
    auto_error=False,
    description="An API key: `vpx_ro_…` (Read Only), `vpx_live_…` (Standard) or `vpx_full_…` (Full Access); "
    "test keys (`vpx_test_ro_…`, `vpx_test_live_…`, `vpx_test_full_…`) see the sandbox and spend a test balance.",
)


@dataclass(frozen=True)
class Caller:
    """The key a request was made with, and its account."""

    key_id: str
    key_type: KeyType
    account_id: str
    # False for a test key: the request runs against the sandbox (vpx.sandbox).
    livemode: bool = True


async def authenticate(request: Request, raw_key: Annotated[str | None, Depends(api_key_header)]) -> Caller:
    state = request.app.state
    limits = state.rate_limits
    address = network.client_address(
        request.client.host if request.client else None,
        request.headers.get("x-forwarded-for"),
        state.trusted_proxies,
    )
    request.state.client_address = address
    address_key = address or "unknown"

    async def refuse(detail: str, *, unless_exhausted: bool = False) -> ProblemError:
        # A well-formed but unknown or revoked key from an address that has used up its failed
        # attempts gets 429, as a good key from it would (D7); one call to the store either way.
        verdict = await (limits.failure_unless_exhausted if unless_exhausted else limits.record_failure)(address_key)
        request.state.response_headers.update(verdict.headers)
        if verdict.policy == "auth" and not verdict.allowed and unless_exhausted:
            return _too_many_failures(verdict)
        return InvalidApiKey(detail, headers={"WWW-Authenticate": 'ApiKey header="X-API-Key"'})

    if not raw_key:
        raise await refuse("Send an API key in the X-API-Key header.")
    if parse_key(raw_key.strip()) is None:
        # D3: refused on its format or checksum, before any database lookup.
        raise await refuse("The API key is malformed.", unless_exhausted=True)
    # Looked up even from an address that used up its failed attempts: only unrecognised keys are
    # refused with 429 then, a recognised key is served as usual (D7).
    known = await key_service.find_key(state.database, secret=raw_key.strip())
    if known is None:
        raise await refuse("The API key is not recognised.", unless_exhausted=True)
    if known.revoked:
        raise await refuse("The API key has been revoked.", unless_exhausted=True)
    request.state.key_id = known.id
    if not known.livemode and not await _sandbox_ready(request, known.account_id):
        raise await refuse("Test keys are not accepted: this server runs without test mode.")
    if not network.allowed(address, known.ip_allowlist):
        failures = await limits.failures_exhausted(address_key)
        if failures is not None:
            request.state.response_headers.update(failures.headers)
            raise _too_many_failures(failures)
        raise IpNotAllowed(f"Requests from {address} are not allowed for this key.")
    if known.account_status != "active":
        # The operator suspended the account; the reason stays with the operator. (A deleted
        # account's keys are revoked: 401 above.)
        raise AccountSuspended(ACCOUNT_SUSPENDED)
    verdict = await limits.admit_key(known.id)
    request.state.response_headers.update(verdict.headers)
    if not verdict.allowed:
        raise RateLimited(
            f"Rate limit exceeded; retry in {verdict.retry_after} s.",
            headers={"Retry-After": str(verdict.retry_after)},
        )
    now = state.clock.now()
    if now >= known.rotate_by:
        # D28: answered normally, with a warning that the key is due for rotation.
        due = known.rotate_by.date().isoformat()
        request.state.response_headers["Warning"] = (
            f'299 vpx "API key past its rotate_by date {due}: create a new key, switch, verify, revoke this one"'
        )
        request.state.response_headers["X-Key-Rotate-By"] = due
    if known.last_used_at is None or now - known.last_used_at >= LAST_USED_RESOLUTION:
        async with state.database.write_sessions() as session, session.begin():
            await key_service.touch_key(session, key_id=known.id, now=now)
    return Caller(key_id=known.id, key_type=known.key_type, account_id=known.account_id, livemode=known.livemode)


async def _sandbox_ready(request: Request, account_id: str) -> bool:
    """A test key's request: the sandbox (vpx.sandbox) holds the account's shadow, and the request was
    routed to it by the key's prefix. False when this server runs without test mode."""
    sandbox = getattr(request.app.state, "sandbox", None)
    if sandbox is None or getattr(request.state, "livemode", True):
        return False
    await sandbox.ensure_account(account_id)
    return True


def _too_many_failures(verdict: Verdict) -> RateLimited:
    return RateLimited(
        "Too many failed key attempts from this address; retry later.",
        headers={"Retry-After": str(verdict.retry_after)},
    )


def require(capability: Capability) -> Callable[[Caller], Awaitable[Caller]]:
    async def check(caller: Annotated[Caller, Depends(authenticate)]) -> Caller:
        if not allows(caller.key_type, capability):
            raise InsufficientPermission(
                f"This operation needs a {needed_key_types(capability)} key; this is a {LABELS[caller.key_type]} key."
            )
        return caller

    return check


ReadCaller = Annotated[Caller, Depends(require(Capability.read))]
BuyCaller = Annotated[Caller, Depends(require(Capability.buy))]
ManageCaller = Annotated[Caller, Depends(require(Capability.manage))]
