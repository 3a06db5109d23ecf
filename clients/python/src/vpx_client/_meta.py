"""What a response says besides its body: rate-limit state, credits, request id, retries.

Every model the client returns derives from ``ApiModel`` and carries this as ``result.meta``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from email.utils import parsedate_to_datetime
from types import NoneType, UnionType
from typing import Any, ClassVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, PrivateAttr, model_validator

# One member of an IETF RateLimit / RateLimit-Policy field: `"default";r=12;t=30`.
_MEMBER = re.compile(r'^\s*"(?P<name>[^"]*)"(?P<params>(?:\s*;\s*[a-z][a-z0-9_-]*=[^;,]*)*)\s*$')
_PARAM = re.compile(r";\s*([a-z][a-z0-9_-]*)=([^;,]*)")


@dataclass(frozen=True)
class RateLimitState:
    """The key's request budget as the last response described it (the IETF `RateLimit` fields)."""

    policy: str | None = None
    limit: int | None = None
    window_seconds: int | None = None
    remaining: int | None = None
    reset_seconds: int | None = None

    @classmethod
    def from_headers(cls, headers: Mapping[str, str]) -> RateLimitState | None:
        current = _members(headers.get("ratelimit"))
        policies = _members(headers.get("ratelimit-policy"))
        if not current and not policies:
            return None
        name, params = current[0] if current else policies[0]
        policy = dict(next((p for n, p in policies if n == name), {}))
        return cls(
            policy=name,
            limit=_int(policy.get("q")),
            window_seconds=_int(policy.get("w")),
            remaining=_int(params.get("r")) if current else None,
            reset_seconds=_int(params.get("t")) if current else None,
        )


@dataclass(frozen=True)
class RetryRecord:
    """One attempt the client made again, and why."""

    attempt: int
    reason: str  # "429", "503", "idempotency_in_progress", "ConnectError", …
    delay_seconds: float
    retry_after: float | None = None


@dataclass(frozen=True)
class ResponseMeta:
    """Metadata of the HTTP response a result came from."""

    status_code: int | None = None
    request_id: str | None = None
    rate_limit: RateLimitState | None = None
    credits_charged: Decimal | None = None
    credits_remaining: Decimal | None = None
    idempotency_key: str | None = None
    replayed: bool = False
    key_rotate_by: str | None = None
    retries: tuple[RetryRecord, ...] = ()
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def attempts(self) -> int:
        return len(self.retries) + 1

    @classmethod
    def from_headers(
        cls,
        status_code: int,
        headers: Mapping[str, str],
        *,
        idempotency_key: str | None = None,
        retries: tuple[RetryRecord, ...] = (),
    ) -> ResponseMeta:
        return cls(
            status_code=status_code,
            request_id=headers.get("x-request-id"),
            rate_limit=RateLimitState.from_headers(headers),
            credits_charged=_decimal(headers.get("x-credits-charged")),
            credits_remaining=_decimal(headers.get("x-credits-remaining")),
            idempotency_key=idempotency_key,
            replayed=headers.get("idempotent-replayed", "").lower() == "true",
            key_rotate_by=headers.get("x-key-rotate-by"),
            retries=retries,
            headers=dict(headers.items()),
        )


NO_META = ResponseMeta()


class CreditTally:
    """Adds up what calls charged, counting each idempotency key once.

    An idempotent replay repeats the first answer's ``credits_charged`` (it is usually the only
    answer for a charge whose first answer was lost), so summing ``meta.credits_charged`` over every
    result counts a key answered twice twice. ``tally.add(result)`` takes the first charge seen for a
    key and adds nothing for a later answer with the same key; results without a key (a call made
    without one) are each added.
    """

    def __init__(self) -> None:
        self._by_key: dict[str, Decimal] = {}
        self._unkeyed = Decimal(0)

    def add(self, result: ApiModel | ResponseMeta) -> Decimal:
        """Count ``result``'s charge; return what this call added to the total (0 for a key
        already counted, or a result that charged nothing)."""
        meta = result if isinstance(result, ResponseMeta) else result.meta
        charged = meta.credits_charged or Decimal(0)
        if meta.idempotency_key is None:
            self._unkeyed += charged
            return charged
        if meta.idempotency_key in self._by_key:
            return Decimal(0)
        self._by_key[meta.idempotency_key] = charged
        return charged

    @property
    def total(self) -> Decimal:
        return self._unkeyed + sum(self._by_key.values(), Decimal(0))


class ApiModel(BaseModel):
    """Base of every generated model: unknown fields are kept (a newer server may send more), and a
    result read from a response carries that response's ``meta``."""

    model_config = ConfigDict(extra="allow")

    _meta: ResponseMeta | None = PrivateAttr(default=None)
    _nullable_required: ClassVar[dict[type[BaseModel], frozenset[str]]] = {}

    @model_validator(mode="before")
    @classmethod
    def _absent_means_null(cls, data: Any) -> Any:
        """A field the document calls required but nullable reads as None when an answer leaves it
        out (a tolerant reader: some answers drop null fields)."""
        if not isinstance(data, dict):
            return data
        names = ApiModel._nullable_required.get(cls)
        if names is None:
            names = frozenset(
                name for name, info in cls.model_fields.items() if info.is_required() and _admits_none(info.annotation)
            )
            ApiModel._nullable_required[cls] = names
        missing = [name for name in names if name not in data]
        return {**data, **dict.fromkeys(missing)} if missing else data

    @property
    def meta(self) -> ResponseMeta:
        """The response this object came from (empty for an object built locally)."""
        return self._meta or NO_META

    def __eq__(self, other: object) -> bool:
        # Two results are equal when their data is, whichever responses brought them.
        if not isinstance(other, BaseModel):
            return NotImplemented
        return (
            type(self) is type(other)
            and self.__dict__ == other.__dict__
            and self.__pydantic_extra__ == other.__pydantic_extra__
        )

    __hash__ = None  # type: ignore[assignment]


def _admits_none(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, UnionType) and NoneType in get_args(annotation)


def attach(model: ApiModel, meta: ResponseMeta) -> None:
    model._meta = meta


def retry_after_seconds(value: str | None, *, now: float) -> float | None:
    """`Retry-After` as seconds to wait: delta-seconds or an HTTP date (RFC 9110)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - now)


def _members(value: str | None) -> list[tuple[str, dict[str, str]]]:
    if not value:
        return []
    members = []
    for part in value.split(","):
        match = _MEMBER.match(part)
        if match:
            params = {k: v.strip() for k, v in _PARAM.findall(match.group("params"))}
            members.append((match.group("name"), params))
    return members


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _decimal(value: str | None) -> Decimal | None:
    if value is None:
        return None
    try:
        return Decimal(value.strip())
    except InvalidOperation:
        return None
