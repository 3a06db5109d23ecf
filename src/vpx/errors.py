"""One error hierarchy, answered as RFC 9457 problem details (D1) with the status codes of D2.

Every failure the service knows about is a ``ProblemError``; the handlers below turn it, the
framework's own errors (unknown route, wrong method, invalid input) and anything unexpected into
``application/problem+json`` with a stable ``code``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException

from vpx.db import KeepChanges
from vpx.validation_messages import error_message, field_name, json_syntax_error

log = logging.getLogger("vpx.errors")

PROBLEM_JSON = "application/problem+json"


class FieldError(BaseModel):
    field: str = Field(description="The offending input, e.g. `limit` or `contacts[3].phone`.")
    message: str


# D1: the error body; D2: its codes.
class Problem(BaseModel):
    """RFC 9457 problem details, the body of every error response."""

    type: str = Field(description="A URI naming the kind of problem: `urn:vpx:problem:<code>`.")
    title: str
    status: int
    detail: str
    code: str = Field(description="Stable, machine-readable snake_case code.")
    request_id: str
    errors: list[FieldError] | None = Field(default=None, description="Validation errors, field by field.")


class ProblemError(Exception):
    status: int = 500
    code: str = "internal_error"
    title: str = "Internal server error"

    def __init__(
        self,
        detail: str,
        *,
        errors: Sequence[FieldError] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = list(errors) if errors is not None else None
        self.headers = headers or {}


class MalformedRequest(ProblemError):
    status, code, title = 400, "malformed_request", "Malformed request"


class InvalidApiKey(ProblemError):
    status, code, title = 401, "invalid_api_key", "Invalid API key"


class InsufficientCredits(ProblemError):
    status, code, title = 402, "insufficient_credits", "Insufficient credits"


class IpNotAllowed(ProblemError):
    status, code, title = 403, "ip_not_allowed", "IP address not allowed"


class InsufficientPermission(ProblemError):
    status, code, title = 403, "insufficient_permission", "Insufficient permission"


ACCOUNT_SUSPENDED = "This account is suspended. Contact the operator of this service."


class AccountSuspended(ProblemError):
    status, code, title = 403, "account_suspended", "Account suspended"


class NotRevealed(ProblemError):
    """A report on a contact the calling account has not revealed: only its buyers may report it."""

    status, code, title = 403, "not_revealed", "Contact not revealed"


class NotFound(ProblemError):
    status, code, title = 404, "not_found", "Not found"


class MethodNotAllowed(ProblemError):
    status, code, title = 405, "method_not_allowed", "Method not allowed"


class KeyLimitReached(ProblemError):
    status, code, title = 409, "key_limit_reached", "Active key limit reached"


class IdempotencyInProgress(ProblemError):
    status, code, title = 409, "idempotency_in_progress", "Request with this idempotency key in progress"


class Conflict(ProblemError):
    status, code, title = 409, "conflict", "Conflict"


class PayloadTooLarge(ProblemError):
    status, code, title = 413, "payload_too_large", "Payload too large"


class IdempotencyMismatch(ProblemError):
    status, code, title = 422, "idempotency_mismatch", "Idempotency key reused with another request"


class InvalidParameters(ProblemError):
    status, code, title = 422, "invalid_parameters", "Invalid parameters"

    @classmethod
    def field(cls, field: str, message: str) -> InvalidParameters:
        return cls(f"{field}: {message}", errors=[FieldError(field=field, message=message)])


class RateLimited(ProblemError):
    status, code, title = 429, "rate_limited", "Too many requests"


class Suppressed(KeepChanges, ProblemError):
    """A reveal refused by the suppression check (D15); the audit entry written before it is kept."""

    status, code, title = 451, "suppressed", "Unavailable for legal reasons"


def parse_client_json(raw: bytes) -> Any:
    """A body a route reads by hand, parsed as JSON. Anything else, bytes that are not UTF-8 or nesting
    deeper than the parser goes included, is a 400 like the framework's own parsing gives, and never a
    traceback: the client's input is not a failure of the service."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise MalformedRequest(json_syntax_error(exc.doc, exc.pos, exc.msg)) from None
    except UnicodeDecodeError:
        raise MalformedRequest("The request body is not valid JSON: it is not UTF-8 text.") from None
    except (ValueError, RecursionError):  # nesting deeper than the parser goes
        raise MalformedRequest("The request body is not valid JSON: it nests too deeply.") from None


def request_id_of(request: Request) -> str:
    return str(getattr(request.state, "request_id", ""))


def problem_response(
    request: Request,
    *,
    status: int,
    code: str,
    title: str,
    detail: str,
    errors: Sequence[FieldError] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = Problem(
        type=f"urn:vpx:problem:{code}",
        title=title,
        status=status,
        detail=detail,
        code=code,
        request_id=request_id_of(request),
        errors=list(errors) if errors is not None else None,
    ).model_dump(exclude_none=True)
    return JSONResponse(body, status_code=status, headers=headers, media_type=PROBLEM_JSON)


def validation_errors(raw: Sequence[Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    for item in raw:
        error = FieldError(field=field_name(item), message=error_message(item))
        if error not in errors:  # one message per field and rule (the members of a union repeat them)
            errors.append(error)
    return errors


def documented_methods(request: Request) -> list[str]:
    """Every method the OpenAPI document lists for the request's path (the router only knows the
    first route that matched the path)."""
    document = request.app.openapi()
    segments = request.url.path.rstrip("/").split("/")
    for template, operations in document.get("paths", {}).items():
        parts = template.rstrip("/").split("/")
        if len(parts) == len(segments) and all(
            (p.startswith("{") and p.endswith("}") and s) or p == s for p, s in zip(parts, segments, strict=True)
        ):
            return sorted(method.upper() for method in operations)
    return []


async def _on_problem(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ProblemError)
    return problem_response(
        request,
        status=exc.status,
        code=exc.code,
        title=exc.title,
        detail=exc.detail,
        errors=exc.errors,
        headers=exc.headers,
    )


async def _on_validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    raw = exc.errors()
    # A body that is not JSON (or no body at all where one is required) is malformed, not invalid. The
    # content type was right (the middleware refuses any other): say where the JSON goes wrong.
    syntax = next((item for item in raw if item.get("type") == "json_invalid"), None)
    missing = any(item.get("type") == "missing" and tuple(item.get("loc", ())) == ("body",) for item in raw)
    if syntax is not None or missing:
        detail = "This request needs a JSON body."
        if syntax is not None:
            loc = tuple(syntax.get("loc", ()))
            position = loc[1] if len(loc) > 1 and isinstance(loc[1], int) else 0
            error = str((syntax.get("ctx") or {}).get("error", ""))
            detail = json_syntax_error(exc.body if isinstance(exc.body, str | bytes) else "", position, error)
        return problem_response(
            request, status=400, code="malformed_request", title=MalformedRequest.title, detail=detail
        )
    errors = validation_errors(raw)
    detail = "; ".join(f"{e.field}: {e.message}" for e in errors[:5])
    return problem_response(
        request,
        status=422,
        code=InvalidParameters.code,
        title=InvalidParameters.title,
        detail=detail or "Invalid parameters.",
        errors=errors,
    )


async def _on_http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 404:
        return problem_response(
            request, status=404, code="not_found", title="Not found", detail=f"No route {request.url.path}."
        )
    if exc.status_code == 405:
        headers = dict(exc.headers or {})
        documented = documented_methods(request)
        if documented:
            headers["Allow"] = ", ".join(documented)
        return problem_response(
            request,
            status=405,
            code="method_not_allowed",
            title=MethodNotAllowed.title,
            detail=f"{request.method} is not allowed on {request.url.path}.",
            headers=headers,
        )
    code, title = {
        400: ("malformed_request", MalformedRequest.title),
        413: ("payload_too_large", PayloadTooLarge.title),
    }.get(exc.status_code, ("http_error", "Error"))
    detail = str(exc.detail)
    if isinstance(exc.__cause__, UnicodeDecodeError):  # the framework's "error parsing the body"
        detail = "The request body is not valid JSON: it is not UTF-8 text."
    elif isinstance(exc.__cause__, RecursionError):
        detail = "The request body is not valid JSON: it nests too deeply."
    return problem_response(
        request,
        status=exc.status_code,
        code=code,
        title=title,
        detail=detail,
        headers=dict(exc.headers or {}),
    )


def _sqlstate(exc: DBAPIError) -> str:
    orig = exc.orig
    return str(getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None) or "")


def is_data_exception(exc: DBAPIError) -> bool:
    """SQLSTATE class 22: a value the database cannot store or compare (a NUL, text too long…)."""
    return _sqlstate(exc).startswith("22")


async def _on_database_error(request: Request, exc: Exception) -> JSONResponse:
    """SQLSTATE class 22 (data exception: a NUL character, a string too long, a number out of range)
    means the input could not be stored or compared: a 422, not a server error. Anything else is a
    real failure and goes on to the 500 handler."""
    assert isinstance(exc, DBAPIError)
    if not is_data_exception(exc):
        raise exc
    log.warning(
        "input refused by the database", extra={"request_id": request_id_of(request), "sqlstate": _sqlstate(exc)}
    )
    return problem_response(
        request,
        status=422,
        code=InvalidParameters.code,
        title=InvalidParameters.title,
        detail="A value in the request cannot be stored (for example a NUL character, or text that is too long).",
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ProblemError, _on_problem)
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(StarletteHTTPException, _on_http)
    app.add_exception_handler(DBAPIError, _on_database_error)


# The error responses documented on operations, keyed by status (D1, D2, 27).
def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    descriptions = {
        400: "Malformed JSON or wrong content type (`malformed_request`).",
        401: "Missing, unknown, malformed or revoked key (`invalid_api_key`).",
        402: "Not enough credits (`insufficient_credits`); nothing charged.",
        403: "IP outside the key's allow-list (`ip_not_allowed`) or key type lacks the permission "
        "(`insufficient_permission`).",
        404: "Unknown object, or one of another account (`not_found`).",
        409: "Conflict (`key_limit_reached`, `idempotency_in_progress`).",
        413: "Body too large (`payload_too_large`).",
        422: "Invalid parameters (`invalid_parameters`) or idempotency key reused with another body "
        "(`idempotency_mismatch`).",
        429: "Rate limited (`rate_limited`); see `Retry-After`.",
        451: "Refused by the suppression check (`suppressed`); nothing charged.",
    }
    return {
        status: {
            "description": descriptions[status],
            "content": {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
        for status in statuses
    }


class SignalFcraBlocked(ProblemError):
    """A purchase of an fcra_blocked signal (D19, D21): never purchasable; nothing charged."""

    status, code, title = 451, "fcra_blocked", "Unavailable for legal reasons"


class InvalidAdminToken(ProblemError):
    status, code, title = 401, "invalid_admin_token", "Invalid admin token"


class AdminForbidden(ProblemError):
    status, code, title = 403, "admin_forbidden", "Admin token refused"
