"""The operator's token (`X-Admin-Token`): one dependency for every admin route."""

from __future__ import annotations

import hmac
from typing import Annotated, Any

from fastapi import Header, Request

from vpx.auth import network
from vpx.errors import PROBLEM_JSON, AdminForbidden, InvalidAdminToken, ProblemError, RateLimited


def problem_response(status: int, description: str) -> dict[int | str, dict[str, Any]]:
    return {
        status: {
            "description": description,
            "content": {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
    }


ADMIN_REFUSALS: dict[int | str, dict[str, Any]] = {
    **problem_response(401, "Missing admin token (`invalid_admin_token`)."),
    **problem_response(403, "Wrong admin token, or the admin API is disabled (`admin_forbidden`)."),
}


async def require_admin(
    request: Request,
    token: Annotated[
        str | None,
        Header(
            alias="X-Admin-Token",
            max_length=500,
            description="An operator token: `$VPX_ADMIN_TOKEN` or one of `$VPX_ADMIN_TOKENS` (not a customer key).",
        ),
    ] = None,
) -> str:
    """The name of the operator token the request carries ("admin" for VPX_ADMIN_TOKEN), compared in
    constant time. Failed attempts count against the client address's failed-token budget, apart from
    customers' failed keys (D7), so a token cannot be guessed at speed and customers' bad keys from an
    address the operator shares never lock the operator out."""
    return await check_admin_token(request, token, budget=client_budget(request))


def client_budget(request: Request) -> str:
    """The failed-token budget of the request's client address."""
    state = request.app.state
    return (
        network.client_address(
            request.client.host if request.client else None,
            request.headers.get("x-forwarded-for"),
            state.trusted_proxies,
        )
        or "unknown"
    )


async def check_admin_token(request: Request, token: str | None, *, budget: str) -> str:
    """The name of the operator token ``token``; a failure counts against the failed-token budget named
    ``budget`` (the client's address for the admin API), and once that budget is used up every token
    is refused (429) until its window ends."""
    state = request.app.state
    exhausted = await state.rate_limits.admin_failures_exhausted(budget)
    if exhausted is not None:
        request.state.response_headers.update(exhausted.headers)
        raise RateLimited(
            "Too many failed operator tokens from this address; retry later.",
            headers={"Retry-After": str(exhausted.retry_after)},
        )
    tokens = state.settings.named_admin_tokens()
    refusal: ProblemError | None = None
    matched: str | None = None
    if not token:
        refusal = InvalidAdminToken("Send the operator token in the X-Admin-Token header.")
    elif not tokens:
        refusal = AdminForbidden("The admin API is disabled: VPX_ADMIN_TOKEN is not set on this server.")
    else:
        sent = token.encode()
        for name, expected in tokens.items():  # every token compared: the time does not tell which
            if hmac.compare_digest(sent, expected.encode()) and matched is None:
                matched = name
        if matched is None:
            refusal = AdminForbidden("The admin token is not this server's.")
    if refusal is not None:
        verdict = await state.rate_limits.record_admin_failure(budget)
        request.state.response_headers.update(verdict.headers)
        raise refusal
    assert matched is not None
    return matched
