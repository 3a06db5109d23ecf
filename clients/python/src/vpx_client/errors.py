"""Exceptions typed by the problem document's ``code`` (RFC 9457), with the HTTP status as fallback.

Every error the service answers is a ``VpxError`` carrying the problem document (``problem``), the
request id and the response's metadata; ``except vpx_client.InsufficientCredits`` catches exactly the
402s, ``except vpx_client.Forbidden`` every 403 whatever its code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vpx_client._meta import NO_META, ResponseMeta


@dataclass(frozen=True)
class FieldProblem:
    """One field of a refused request (``errors`` of an `invalid_parameters` problem)."""

    field: str
    message: str


class VpxError(Exception):
    """An error answer of the service, or (``status`` None) no answer at all."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        problem: Mapping[str, Any] | None = None,
        meta: ResponseMeta = NO_META,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.problem: dict[str, Any] = dict(problem or {})
        self.meta = meta

    @property
    def code(self) -> str | None:
        code = self.problem.get("code")
        return code if isinstance(code, str) else None

    @property
    def title(self) -> str | None:
        value = self.problem.get("title")
        return value if isinstance(value, str) else None

    @property
    def detail(self) -> str | None:
        value = self.problem.get("detail")
        return value if isinstance(value, str) else None

    @property
    def request_id(self) -> str | None:
        value = self.problem.get("request_id")
        return value if isinstance(value, str) else self.meta.request_id

    @property
    def errors(self) -> list[FieldProblem]:
        """The field errors of the problem, if it lists any."""
        items = self.problem.get("errors") or []
        return [
            FieldProblem(field=str(item.get("field", "")), message=str(item.get("message", "")))
            for item in items
            if isinstance(item, Mapping)
        ]


class ConnectionFailed(VpxError):
    """No answer: the connection failed or timed out (after the retries the request allowed)."""


class StreamClosed(VpxError):
    """The signal stream's access ended while it was open: the service's last event was `closed`, and
    the stream does not reconnect. ``reason`` says why (`key_revoked`, `ip_not_allowed`,
    `account_suspended`, `account_deleted`, `signed_out`, `session_expired`, or a reason a newer service
    adds); ``detail`` is the service's sentence for people."""

    @property
    def reason(self) -> str:
        return self.code or "unknown"


# --- By HTTP status: the fallback for codes this client does not know ---


class BadRequest(VpxError):
    """400."""


class Unauthorized(VpxError):
    """401."""


class PaymentRequired(VpxError):
    """402."""


class Forbidden(VpxError):
    """403."""


class NotFound(VpxError):
    """404 (`not_found`): unknown object, route, or an object of another account."""


class MethodNotAllowed(VpxError):
    """405 (`method_not_allowed`)."""


class Conflict(VpxError):
    """409."""


class PayloadTooLarge(VpxError):
    """413 (`payload_too_large`)."""


class UnprocessableEntity(VpxError):
    """422."""


class RateLimited(VpxError):
    """429 (`rate_limited`), raised once the retries are spent; ``retry_after`` says how long to wait."""

    @property
    def retry_after(self) -> float | None:
        value = self.meta.headers.get("retry-after")
        try:
            return float(value) if value is not None else None
        except ValueError:
            return None


class UnavailableForLegalReasons(VpxError):
    """451."""


class ServerError(VpxError):
    """5xx."""


# --- By problem code ---


class MalformedRequest(BadRequest):
    """`malformed_request`: the body is not JSON, or not sent as JSON."""


class InvalidApiKey(Unauthorized):
    """`invalid_api_key`: missing, unknown, malformed or revoked key."""


class InsufficientCredits(PaymentRequired):
    """`insufficient_credits`: nothing was charged; ``meta.credits_remaining`` says the balance."""


class PermissionDenied(Forbidden):
    """`insufficient_permission`: the key type lacks the permission; ``detail`` names the type needed."""


class IpNotAllowed(Forbidden):
    """`ip_not_allowed`: the caller's address is outside the key's allow-list."""


class AccountSuspended(Forbidden):
    """`account_suspended`."""


class NotRevealed(Forbidden):
    """`not_revealed`: only an account that revealed the contact may report its fields."""


class KeyLimitReached(Conflict):
    """`key_limit_reached`: the account already has its maximum of active keys."""


class IdempotencyInProgress(Conflict):
    """`idempotency_in_progress`: the first request with this idempotency key is still running."""


class IdempotencyMismatch(UnprocessableEntity):
    """`idempotency_mismatch`: the idempotency key was used with another request."""


class ValidationFailed(UnprocessableEntity):
    """`invalid_parameters`: ``errors`` lists the refused fields; ``fields`` maps each to its message."""

    @property
    def fields(self) -> dict[str, str]:
        return {error.field: error.message for error in self.errors}


class Suppressed(UnavailableForLegalReasons):
    """`suppressed`: the reveal was refused by the suppression check; nothing was charged."""


class FcraBlocked(UnavailableForLegalReasons):
    """`fcra_blocked`: the signal is FCRA-regulated and never for sale."""


BY_CODE: dict[str, type[VpxError]] = {
    "malformed_request": MalformedRequest,
    "invalid_api_key": InvalidApiKey,
    "insufficient_credits": InsufficientCredits,
    "insufficient_permission": PermissionDenied,
    "ip_not_allowed": IpNotAllowed,
    "account_suspended": AccountSuspended,
    "not_revealed": NotRevealed,
    "not_found": NotFound,
    "method_not_allowed": MethodNotAllowed,
    "key_limit_reached": KeyLimitReached,
    "idempotency_in_progress": IdempotencyInProgress,
    "conflict": Conflict,
    "payload_too_large": PayloadTooLarge,
    "idempotency_mismatch": IdempotencyMismatch,
    "invalid_parameters": ValidationFailed,
    "rate_limited": RateLimited,
    "suppressed": Suppressed,
    "fcra_blocked": FcraBlocked,
}

BY_STATUS: dict[int, type[VpxError]] = {
    400: BadRequest,
    401: Unauthorized,
    402: PaymentRequired,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    413: PayloadTooLarge,
    422: UnprocessableEntity,
    429: RateLimited,
    451: UnavailableForLegalReasons,
}


def error_for(status: int, body: bytes, meta: ResponseMeta) -> VpxError:
    """The exception for an error answer: by the problem's ``code``, else by status."""
    problem: dict[str, Any] = {}
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        problem = parsed
    code = problem.get("code")
    kind = BY_CODE.get(code) if isinstance(code, str) else None
    if kind is None:
        kind = BY_STATUS.get(status, ServerError if status >= 500 else VpxError)
    detail = problem.get("detail") or problem.get("title") or body[:200].decode("utf-8", "replace") or "no body"
    label = f"{status} {code}" if isinstance(code, str) else str(status)
    request_id = problem.get("request_id") or meta.request_id
    message = f"{label}: {detail}" + (f" (request {request_id})" if request_id else "")
    return kind(message, status=status, problem=problem, meta=meta)
