"""What the built-in adapters share: one request to a provider, its refusals read as ``ProviderError``,
its JSON decoded, and the values vpx keeps put in one form whichever provider gave them.

The key travels only in a request header and never appears in an error message: a provider's error
body is never quoted (it may echo the key in any case or encoding, or cut through it); the message is a
fixed reason and the HTTP status.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlencode

import httpx

from vpx.contacts.normalise import fold, phone_e164
from vpx.enrichment.providers.base import (
    AUTH_FAILED,
    BAD_RESPONSE,
    QUOTA_EXHAUSTED,
    RATE_LIMITED,
    TIMEOUT,
    UNAVAILABLE,
    FoundValue,
    ProviderError,
)

JSONObject = dict[str, Any]

# x-ratelimit-reset values above this are epoch seconds; below, seconds left.
_EPOCH_THRESHOLD = 1_000_000_000


@dataclass(frozen=True)
class Request:
    """One provider request: method, path under the API root, query parameters (never the key)."""

    method: str
    path: str
    params: tuple[tuple[str, str], ...]

    def canonical(self) -> str:
        """The request as a cache key: parameters sorted and case-folded, since the providers match
        names and places without regard to case."""
        params = sorted((name, fold(value)) for name, value in self.params)
        return f"{self.method} {self.path}?{urlencode(params)}"


@dataclass(frozen=True)
class Statuses:
    """What a provider's HTTP statuses mean, as its documentation says. Any other 4xx is an answer the
    adapter did not expect (BAD_RESPONSE); any 5xx means the provider is unavailable."""

    no_match: frozenset[int] = frozenset({404})
    auth_failed: frozenset[int] = frozenset({401})
    quota_exhausted: frozenset[int] = frozenset()
    rate_limited: frozenset[int] = frozenset({429})


async def send(
    client: httpx.AsyncClient,
    base_url: str,
    request: Request,
    *,
    title: str,
    key_header: str,
    api_key: str,
    statuses: Statuses,
) -> JSONObject | None:
    """Sends ``request`` with the key in ``key_header``; returns the decoded JSON object of a 2xx
    answer, or None for a 204 or a status that means no match. Raises ProviderError for everything
    else."""
    url = base_url.rstrip("/") + request.path
    headers = {key_header: api_key, "Accept": "application/json"}
    try:
        response = await client.request(request.method, url, params=list(request.params), headers=headers)
    except httpx.TimeoutException as exc:  # before TransportError: a timeout is one too
        raise ProviderError(TIMEOUT, f"{title} did not answer in time ({type(exc).__name__})") from None
    except httpx.TransportError as exc:
        # The exception's own text may quote the request; its type says enough.
        raise ProviderError(UNAVAILABLE, f"{title} could not be reached ({type(exc).__name__})") from None
    if response.status_code == httpx.codes.NO_CONTENT:
        return None  # a lookup that succeeded with nothing to say found nothing
    if response.is_success:
        return decode(response, title=title)
    if response.status_code in statuses.no_match:
        return None
    raise refusal(response, title=title, statuses=statuses)


def refusal(response: httpx.Response, *, title: str, statuses: Statuses) -> ProviderError:
    """The ProviderError a non-2xx answer stands for, by the provider's own status table."""
    status = response.status_code
    # The body is not quoted: a fixed reason and the status are all the customer is shown.
    if status in statuses.auth_failed:
        return ProviderError(AUTH_FAILED, f"{title} refused the key (HTTP {status})", status=status)
    if status in statuses.quota_exhausted:
        return ProviderError(
            QUOTA_EXHAUSTED, f"{title} says the account is out of credits (HTTP {status})", status=status
        )
    if status in statuses.rate_limited:
        return ProviderError(
            RATE_LIMITED, f"{title} asks to slow down (HTTP {status})", retry_after=retry_after(response), status=status
        )
    if status >= 500:
        return ProviderError(UNAVAILABLE, f"{title} failed (HTTP {status})", status=status)
    return ProviderError(BAD_RESPONSE, f"{title} answered HTTP {status}", status=status)


def decode(response: httpx.Response, *, title: str) -> JSONObject:
    """The answer's JSON object; BAD_RESPONSE when it is not JSON or not an object."""
    try:
        body = response.json()
    except ValueError:  # json.JSONDecodeError and UnicodeDecodeError are both ValueErrors
        raise ProviderError(BAD_RESPONSE, f"{title} answered something that is not JSON") from None
    if not isinstance(body, dict):
        raise ProviderError(BAD_RESPONSE, f"{title} answered JSON that is not an object")
    return body


def retry_after(response: httpx.Response, *, now: float | None = None) -> float | None:
    """Seconds the provider asked to wait: ``Retry-After`` (seconds or an HTTP date), else
    ``x-ratelimit-reset`` (an ISO 8601 time, epoch seconds, or seconds left), else None."""
    now = time.time() if now is None else now
    value = response.headers.get("retry-after")
    if value is not None:
        value = value.strip()
        if _is_number(value):
            return max(0.0, float(value))
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - now)
        except (TypeError, ValueError, IndexError):
            pass
    reset = response.headers.get("x-ratelimit-reset")
    if reset is not None:
        reset = reset.strip()
        if _is_number(reset):
            seconds = float(reset)
            return max(0.0, seconds - now) if seconds > _EPOCH_THRESHOLD else max(0.0, seconds)
        try:
            return max(0.0, datetime.fromisoformat(reset.replace("Z", "+00:00")).timestamp() - now)
        except ValueError:
            pass
    return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# --- The query as sent, and the answer as kept ---


def clean(value: str | None) -> str:
    """A name or place as sent: surrounding and repeated whitespace removed."""
    return " ".join((value or "").split())


def domain(value: str | None) -> str | None:
    """A bare host in lower case (no scheme, ``www.``, port or path), or None."""
    host = clean(value).lower()
    if "://" in host:
        host = host.split("://", 1)[1]
    host = host.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].split(":", 1)[0].strip(".")
    host = host.removeprefix("www.")
    return host if "." in host and " " not in host else None


def text(value: Any) -> str | None:
    """A non-empty string; None for anything else (PDL answers ``true`` for a field the plan hides)."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value or None


def website(value: Any) -> str | None:
    """``https://host`` in lower case, without ``www.``, so the providers' answers for one business
    compare equal."""
    host = domain(text(value))
    return f"https://{host}" if host else None


def linkedin_url(value: Any) -> str | None:
    """A full ``https://www.linkedin.com/...`` URL from a URL with or without a scheme, or from a
    bare handle such as ``company/acme`` (Hunter)."""
    raw = text(value)
    if raw is None:
        return None
    path = raw.split("://", 1)[1] if "://" in raw else raw
    marker = path.lower().find("linkedin.com")
    if marker >= 0:
        path = path[marker + len("linkedin.com") :]
    path = path.split("?", 1)[0].split("#", 1)[0].strip("/")
    return f"https://www.linkedin.com/{path}" if path else None


def phone(value: Any) -> str | None:
    """E.164 when the number is valid; otherwise as the provider wrote it (vpx normalises later)."""
    raw = text(value)
    if raw is None:
        return None
    return phone_e164(raw) or raw


def employee_count(value: Any) -> int | str | None:
    """A head count as an int when the provider gives a number, else its range (``"11-50"``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float):
        return int(value) if value.is_integer() and value >= 0 else None
    raw = text(value)
    if raw is None:
        return None
    digits = raw.replace(",", "")
    return int(digits) if digits.isdigit() else raw


def values(
    fields: dict[str, str | int | None], *, confidence: float | None = None, confident: frozenset[str] | None = None
) -> dict[str, FoundValue]:
    """The fields that have a value, as FoundValues. ``confidence`` applies to the fields named in
    ``confident`` (to all of them when it is None)."""
    found: dict[str, FoundValue] = {}
    for name, value in fields.items():
        if value is None:
            continue
        sure = confidence if confident is None or name in confident else None
        found[name] = FoundValue(value, sure)
    return found


def ratio(value: Any, scale: float) -> float | None:
    """A provider's score as 0-1 (``value / scale``), or None when it gave no number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return min(1.0, max(0.0, float(value) / scale))


def first(items: Any) -> Any:
    """The first element of a list, or None."""
    return items[0] if isinstance(items, list) and items else None


def child(obj: Any, name: str) -> JSONObject:
    """``obj[name]`` when both are JSON objects, else an empty one."""
    return as_object(obj.get(name) if isinstance(obj, dict) else None)


def as_object(value: Any) -> JSONObject:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}
