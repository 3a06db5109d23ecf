"""One error hierarchy, answered as RFC 9457 problem details (D1) with the status codes of D2.

Every failure the service knows about is a ``ProblemError``; the handlers below turn it, the
framework's own errors (unknown route, wrong method, invalid input) and anything unexpected into
``application/problem+json`` with a stable ``code``.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException

from vpx.db import KeepChanges

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


# Parts of a validation error's location that name a type a value was tried as (one member of a
# union: `str`, `list[str]`, `function-after[…]`), not a field a client sent.
_TYPE_PARTS = frozenset({"str", "int", "float", "bool", "decimal", "none", "list", "dict"})


def _is_type_part(part: str) -> bool:
    return part in _TYPE_PARTS or "[" in part or "-" in part


def _field_name(loc: Sequence[Any]) -> str:
    parts = list(loc)
    if parts and parts[0] in ("query", "body", "path", "header", "cookie"):
        parts = parts[1:]
    name = ""
    for part in parts:
        if isinstance(part, int):
            name += f"[{part}]"
        elif not _is_type_part(str(part)):
            name += f".{part}" if name else str(part)
    return name or "body"


def _number(value: Any) -> str:
    """A limit as a person writes it: 0.0001, 100, 1 (never Decimal('0.0001'), 1e-04 or 1.0)."""
    if isinstance(value, str):
        # A constraint behind a validator of the field's own reaches the error as its repr.
        written = re.fullmatch(r"Decimal\('([^']*)'\)", value)
        return _number(Decimal(written.group(1))) if written else value
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") if value.is_finite() else str(value)
    return str(value)


def _choices(expected: Any) -> str:
    """pydantic's "'ro', 'live' or 'full'" as the plain list "ro, live, full"."""
    text = str(expected)
    quoted = re.findall(r"'((?:[^'\\]|\\.)*)'", text)
    return ", ".join(quoted) if quoted else text


def _count(limit: Any, noun: str) -> str:
    return f"{limit} {noun}{'' if limit == 1 else 's'}"


# Messages without a number or a list in them, by pydantic error type.
_PLAIN_MESSAGES = {
    "missing": "is required",
    "extra_forbidden": "is not a known field",
    "string_type": "must be a string",
    "string_unicode": "must be UTF-8 text",
    "string_sub_type": "must be a string",
    "bytes_type": "must be a string",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "int_parsing_size": "is too large",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "decimal_type": "must be a number",
    "decimal_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "set_type": "must be a list",
    "frozen_set_type": "must be a list",
    "iterable_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dataclass_type": "must be an object",
    "none_required": "must be null",
    "date_type": "must be a date (YYYY-MM-DD)",
    "date_parsing": "must be a date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "must be a date (YYYY-MM-DD)",
    "date_from_datetime_inexact": "must be a date (YYYY-MM-DD), without a time",
    "datetime_type": "must be a date and time, e.g. 2026-11-01T00:00:00Z",
    "datetime_parsing": "must be a date and time, e.g. 2026-11-01T00:00:00Z",
    "datetime_from_date_parsing": "must be a date and time, e.g. 2026-11-01T00:00:00Z",
    "datetime_object_invalid": "must be a date and time, e.g. 2026-11-01T00:00:00Z",
    "timezone_aware": "must include a time zone, e.g. Z or +02:00",
    "timezone_naive": "must not include a time zone",
    "time_type": "must be a time of day (HH:MM:SS)",
    "time_parsing": "must be a time of day (HH:MM:SS)",
    "time_delta_type": "must be a duration",
    "time_delta_parsing": "must be a duration",
    "url_type": "must be a URL",
    "url_parsing": "must be a URL",
    "url_syntax_violation": "must be a URL",
    "uuid_type": "must be a UUID",
    "uuid_parsing": "must be a UUID",
    "uuid_version": "must be a UUID",
    "json_invalid": "must be valid JSON",
    "json_type": "must be a JSON string",
    "union_tag_not_found": "is required",
}


def _words_of_pydantic(message: str) -> str:
    """A message of a kind the table does not know, pydantic's phrasing turned into the same plain
    form ("Input should be a valid email" -> "must be a valid email")."""
    message = re.sub(r"^(Value error|Assertion failed), ", "", message)
    message = re.sub(
        r"^(Input|Value|String|List|Dictionary|Decimal input|Tuple|Set|Data) should( not)? ", r"must\2 ", message
    )
    return message


def error_message(item: Mapping[str, Any]) -> str:
    """A validation error's message in plain words, naming the rule the value broke: "must be at most
    100", "must be at least 10 characters", "must be one of: ro, live, full". The field is named beside
    it (``FieldError.field``, and ``field: message`` in a problem's detail)."""
    kind = str(item.get("type", ""))
    context = item.get("ctx") or {}
    if kind in _PLAIN_MESSAGES:
        return _PLAIN_MESSAGES[kind]
    match kind:
        case "greater_than_equal":
            return f"must be at least {_number(context.get('ge'))}"
        case "greater_than":
            return f"must be greater than {_number(context.get('gt'))}"
        case "less_than_equal":
            return f"must be at most {_number(context.get('le'))}"
        case "less_than":
            return f"must be less than {_number(context.get('lt'))}"
        case "multiple_of":
            return f"must be a multiple of {_number(context.get('multiple_of'))}"
        case "string_too_short" | "string_too_long" | "too_short" | "too_long":
            # A text type with a validator of its own (vpx.fields) has its length checked as any
            # value's: say it as for any other string.
            text = kind.startswith("string") or isinstance(item.get("input"), str)
            shortest = kind.endswith("short")
            limit = context.get("min_length" if shortest else "max_length")
            if shortest and limit == 1:
                return "must not be empty"
            noun = "character" if text else "item"
            verb = "be" if text else "have"
            return f"must {verb} {'at least' if shortest else 'at most'} {_count(limit, noun)}"
        case "decimal_max_digits":
            return f"must have at most {_count(context.get('max_digits'), 'digit')}"
        case "decimal_max_places":
            return f"must have at most {_count(context.get('decimal_places'), 'decimal place')}"
        case "decimal_whole_digits":
            return f"must have at most {_count(context.get('whole_digits'), 'digit')} before the decimal point"
        case "enum" | "literal_error":
            return f"must be one of: {_choices(context.get('expected', ''))}"
        case "union_tag_invalid":
            return f"must be one of: {_choices(context.get('expected_tags', ''))}"
        case "string_pattern_mismatch":
            return f"must match the pattern {context.get('pattern')}"
        case "url_scheme":
            return f"must be a URL starting with {_choices(context.get('expected_schemes', ''))}"
    return _words_of_pydantic(str(item.get("msg", "is not valid")))


def _location(item: Mapping[str, Any]) -> tuple[Any, ...]:
    loc = tuple(item.get("loc", ()))
    if item.get("type") in ("union_tag_invalid", "union_tag_not_found"):
        # The tag is a field of the object: name it (`steps[0].type`), not only the object.
        discriminator = str((item.get("ctx") or {}).get("discriminator", "")).strip("'")
        if discriminator.isidentifier():
            loc += (discriminator,)
    return loc


def validation_errors(raw: Sequence[Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    for item in raw:
        error = FieldError(field=_field_name(_location(item)), message=error_message(item))
        if error not in errors:  # one message per field and rule (the members of a union repeat them)
            errors.append(error)
    return errors


def json_syntax_error(document: str | bytes, position: int, error: str) -> str:
    """Where a JSON document stops being JSON, as a person finds it in an editor: line and column."""
    text = document.decode("utf-8", "replace") if isinstance(document, bytes) else document
    before = text[:position]
    line = before.count("\n") + 1
    column = position - (before.rfind("\n") + 1) + 1
    reason = error[:1].lower() + error[1:] if error else "not JSON"
    return f"The request body is not valid JSON: {reason} at line {line}, column {column}."


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
