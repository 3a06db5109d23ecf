"""The one small interface every enrichment provider adapter implements (D32).

An adapter speaks one provider's documented HTTP API with the customer's own key. It is asked for a
business (by name and place, and by its domain when the account may send it) or for a person at a
business (a decision-maker, D31), and answers what it found, field by field, or that it found
nothing. Everything else — the waterfall, caching, counting, rate limits, retries, the circuit
breaker, timeouts, storage — is the caller's (vpx.enrichment.waterfall): an adapter makes one HTTP
request per call, raises ``ProviderError`` with a stable code when the provider refuses or fails, and
never logs or returns the key.

Adapters are registered by name in the entry-point group ``vpx.enrichment_providers`` (the built-in
ones in vpx's own pyproject.toml), so a third party adds a provider by publishing a package with an
entry point, without editing vpx (docs/enrichment.md).
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, runtime_checkable
from urllib.parse import quote, quote_plus

import httpx

# Fields enrichment fills: the business's own, and each decision-maker's.
BUSINESS_FIELDS = ("email", "phone", "website", "linkedin_url", "employee_count")
PERSON_FIELDS = ("email", "phone", "title", "linkedin_url")
DECISION_MAKER_PREFIX = "decision_maker."
ALL_FIELDS = (*BUSINESS_FIELDS, *(DECISION_MAKER_PREFIX + f for f in PERSON_FIELDS))

# ProviderError codes (stable: they appear in the API's attempts[].error.code).
AUTH_FAILED = "provider_auth_failed"  # the key is refused (401, or 403 where that means a bad key)
QUOTA_EXHAUSTED = "provider_quota_exhausted"  # the account at the provider is out of credits: never retried
TIMEOUT = "provider_timeout"
UNAVAILABLE = "provider_unavailable"  # 5xx, connection refused, or the circuit breaker is open
BAD_RESPONSE = "provider_bad_response"  # an answer the adapter cannot read, or a 4xx it did not expect
RATE_LIMITED = "rate_limited"  # slow down: retried by the caller after ``retry_after`` seconds


class ProviderError(Exception):
    """A provider refused or failed a call. ``retry_after``: seconds the provider asked to wait
    (Retry-After), for RATE_LIMITED."""

    def __init__(self, code: str, message: str, *, retry_after: float | None = None, status: int | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after
        self.status = status


MASK = "***"


def masked(text: str, api_key: str) -> str:
    """``text`` with every copy of the key blanked out: in any case, URL-encoded, and in base64 (at
    each of the three alignments a longer base64 text could hold it in). Mask first, cut after: a
    text cut first could keep a piece of the key the masking no longer recognises.

    The built-in adapters never quote a provider's answer; this is the net under anything an adapter
    (a third party's too) puts in a ``ProviderError`` message."""
    if not api_key:
        return text
    plain = {api_key, quote(api_key, safe=""), quote_plus(api_key, safe=""), quote(api_key)}
    text = re.sub("|".join(re.escape(form) for form in sorted(plain, key=len, reverse=True)), MASK, text, flags=re.I)
    raw = api_key.encode()
    encoded: set[str] = set()
    for skip in range(3):
        # The characters of base64(skip leading bytes + key) that only the key's bits decide.
        whole = base64.b64encode(b"\0" * skip + raw).decode().rstrip("=")
        start = -(-skip * 8 // 6)
        end = (skip + len(raw)) * 8 // 6
        core = whole[start:end]
        if len(core) >= 4:
            encoded.update({core, core.replace("+", "-").replace("/", "_")})
    for form in sorted(encoded, key=len, reverse=True):
        text = text.replace(form, MASK)
    return text


@dataclass(frozen=True)
class BusinessQuery:
    """What vpx may tell a provider about a business. For a contact the account has not revealed,
    only its preview: name, city, state (a hidden registry field such as its website is never sent,
    since the answer would echo it). ``domain``: a registrable domain the account may send (from the
    revealed record, or an earlier enrichment)."""

    name: str
    city: str
    state: str
    domain: str | None = None
    phone: str | None = None  # E.164, revealed contacts only


@dataclass(frozen=True)
class PersonQuery:
    """A decision-maker at a business: their name as the registry gives it, and the business."""

    full_name: str
    first_name: str
    last_name: str
    business: BusinessQuery


@dataclass(frozen=True)
class FoundValue:
    value: str | int
    confidence: float | None = None  # 0-1, when the provider says how sure it is (PDL likelihood, Hunter score)


@dataclass(frozen=True)
class Found:
    """A provider's answer: the values it gave (by field name, without the ``decision_maker.``
    prefix for a person), and its own id of the record, when it has one."""

    values: dict[str, FoundValue] = field(default_factory=dict)
    record_id: str | None = None


@runtime_checkable
class Provider(Protocol):
    """An enrichment provider's adapter."""

    name: ClassVar[str]  # as the API names it: hunter, pdl, apollo
    title: ClassVar[str]  # for people: "Hunter", "People Data Labs"
    default_base_url: ClassVar[str]  # the public API root, without a version path
    business_fields: ClassVar[frozenset[str]]  # what find_business can give (BUSINESS_FIELDS names)
    person_fields: ClassVar[frozenset[str]]  # what find_person can give (PERSON_FIELDS names)

    def business_request(self, query: BusinessQuery) -> str | None:
        """The canonical form of the request find_business would send (the cache key), or None when
        the query is not enough for this provider (Apollo needs a domain): then it is not called."""

    def person_request(self, query: PersonQuery) -> str | None:
        """The same for find_person."""

    async def find_business(
        self, client: httpx.AsyncClient, base_url: str, api_key: str, query: BusinessQuery
    ) -> Found | None:
        """One request; None when the provider has no match (a 404, or an empty answer)."""

    async def find_person(
        self, client: httpx.AsyncClient, base_url: str, api_key: str, query: PersonQuery
    ) -> Found | None:
        """One request; None when the provider has no match."""
