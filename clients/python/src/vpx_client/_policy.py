"""The rules the sync and async clients share: which requests spend, which may be sent again and
after how long, and how bodies and query strings are written."""

from __future__ import annotations

import json
import random
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Final
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from vpx_client._meta import RateLimitState, retry_after_seconds

API_PREFIX: Final = "/api/v1"

# Answers worth sending again: the request was refused before any work (429) or a gateway/the
# server could not take it (502, 503, 504).
RETRY_STATUSES: Final = frozenset({429, 502, 503, 504})

# POSTs that spend credits (D9): they always carry an Idempotency-Key, and are never sent twice
# without one.
_SPENDING: Final = (
    re.compile(r"^/contacts/reveal$"),
    re.compile(r"^/contacts/[^/]+/reveal$"),
    re.compile(r"^/contacts/batch-reveal$"),
    re.compile(r"^/signals/[^/]+/purchase$"),
)
# POSTs that create and accept Idempotency-Key (D12): they get one too, so a retry cannot create twice.
_CREATING: Final = (
    re.compile(r"^/contacts/contribute$"),
    re.compile(r"^/contacts/batch-enrich$"),
    re.compile(r"^/keys$"),
    re.compile(r"^/webhooks$"),
)
# Transport errors raised before the request left: safe to send again whatever the method.
NOT_SENT: Final = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def relative(path: str) -> str:
    """``path`` without the API prefix and query: what the route tables match."""
    path = path.split("?", 1)[0]
    return path[len(API_PREFIX) :] if path.startswith(API_PREFIX + "/") else path


def is_spending(method: str, path: str) -> bool:
    return method.upper() == "POST" and any(p.match(relative(path)) for p in _SPENDING)


def takes_idempotency_key(method: str, path: str) -> bool:
    return method.upper() == "POST" and any(p.match(relative(path)) for p in (*_SPENDING, *_CREATING))


def new_idempotency_key() -> str:
    return f"vpxc-{uuid.uuid4().hex}"


def new_request_id() -> str:
    return f"req_c{uuid.uuid4().hex}"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to try again.

    ``max_retries`` further attempts after the first; waits grow as ``backoff * 2**n`` up to
    ``max_backoff``, half of each wait at random (jitter). A server-given wait (``Retry-After``,
    or the ``RateLimit`` reset on a 429) is honoured as given, plus up to 10 % jitter; when it is
    longer than ``max_wait`` the error is raised at once instead."""

    max_retries: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_wait: float = 60.0

    def backoff_delay(self, attempt: int, rng: random.Random) -> float:
        ceiling = min(self.max_backoff, self.backoff * 2.0 ** (attempt - 1))
        return ceiling / 2 + rng.uniform(0, ceiling / 2)

    def server_delay(self, seconds: float, rng: random.Random) -> float:
        return seconds + rng.uniform(0, min(1.0, seconds * 0.1))


def may_send_again(method: str, *, spending: bool, idempotency_key: str | None) -> bool:
    """Whether a request whose outcome is unknown may be sent again: idempotent methods, and POSTs
    that carry an Idempotency-Key (the service answers a repeat with the first answer)."""
    if spending and idempotency_key is None:
        return False
    return method.upper() in {"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH"} or idempotency_key is not None


def retry_reason(method: str, response: httpx.Response, *, spending: bool, idempotency_key: str | None) -> str | None:
    """Why an answer should be tried again, or None."""
    status = response.status_code
    if spending and idempotency_key is None:
        return None  # never: the service keeps no record that would make a repeat harmless
    if status == 429:
        return "429"  # refused before any work: safe to repeat whatever the method
    if status == 409 and idempotency_key is not None and _problem_code(response) == "idempotency_in_progress":
        return "idempotency_in_progress"
    if status in RETRY_STATUSES and may_send_again(method, spending=spending, idempotency_key=idempotency_key):
        return str(status)
    return None


def server_wait(response: httpx.Response, *, now: float) -> float | None:
    """The wait the server asks for: `Retry-After`, else (on a 429) the `RateLimit` reset."""
    after = retry_after_seconds(response.headers.get("retry-after"), now=now)
    if after is not None:
        return after
    if response.status_code == 429:
        state = RateLimitState.from_headers(response.headers)
        if state is not None and state.reset_seconds is not None:
            return float(state.reset_seconds)
    return None


def _problem_code(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    code = body.get("code") if isinstance(body, dict) else None
    return code if isinstance(code, str) else None


# --- Writing requests ---


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return _plain(value.model_dump(mode="python", exclude_unset=True))
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if isinstance(value, Decimal):
        # Credits are JSON numbers: exact decimals written without exponent.
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def json_body(value: Any) -> bytes:
    """A request body: models (fields the caller set), mappings, Decimals as JSON numbers."""
    return json.dumps(_plain(value), separators=(",", ":"), ensure_ascii=False).encode()


def body_of(model: BaseModel | Mapping[str, Any] | None, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A body from a request model or mapping, and/or keyword fields (None values left out)."""
    body: dict[str, Any] = {}
    if isinstance(model, BaseModel):
        body.update(model.model_dump(mode="python", exclude_unset=True))
    elif model is not None:
        body.update(model)
    body.update({k: v for k, v in fields.items() if v is not None})
    return body


def query(**params: Any) -> dict[str, str]:
    """Query parameters without the unset ones; booleans, dates and decimals written as the API reads them."""
    out: dict[str, str] = {}
    for name, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, datetime | date):
            out[name] = value.isoformat()
        else:
            out[name] = str(value)
    return out


def base_url_of(url: str) -> str:
    """The API root: ``http://host:8000`` and ``http://host:8000/api/v1`` both give the latter."""
    url = url.rstrip("/")
    return url if url.endswith(API_PREFIX) else url + API_PREFIX


class Unset:
    """The value of an update's field the caller did not give (None is sent as null: "remove")."""

    _instance: Unset | None = None

    def __new__(cls) -> Unset:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Final = Unset()


def changes(**fields: Any) -> dict[str, Any]:
    """An update's body: the fields given, None included (sent as null)."""
    return {name: value for name, value in fields.items() if not isinstance(value, Unset)}


def segment(value: str) -> str:
    """An id as one path segment (a `/` or `..` in it cannot reach another route)."""
    return quote(str(value), safe="")
