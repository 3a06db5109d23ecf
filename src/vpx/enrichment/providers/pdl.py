"""People Data Labs (API v5, https://docs.peopledatalabs.com), with the customer's key in the
``X-Api-Key`` header.

A business: ``GET /v5/company/enrich`` with ``name``, ``website`` (the domain, when the account may
send it), ``locality`` (city) and ``region`` (state). Unlike PDL's other APIs, the company's fields
sit at the top level of the answer, beside ``status`` and ``likelihood``, not in a ``data`` object:

  ============== =========================================================
  website        ``website`` (a bare domain)
  linkedin_url   ``linkedin_url`` (``linkedin.com/company/...``)
  employee_count ``employee_count`` (an int), else ``size`` (``"51-200"``)
  record_id      ``id``
  ============== =========================================================

A person: ``GET /v5/person/enrich`` with ``first_name`` and ``last_name`` (``name`` when the registry
gave no split), ``company`` (the domain, else the business's name), ``locality``, ``region`` and
``min_likelihood``. The answer wraps the record: ``{"status": 200, "likelihood": 9, "data": {...}}``:

  ============== =========================================================
  email          ``data.work_email``
  phone          ``data.mobile_phone``, else ``data.phone_numbers[0]``
  title          ``data.job_title`` (PDL writes it in lower case)
  linkedin_url   ``data.linkedin_url``
  record_id      ``data.id``
  ============== =========================================================

Every value's confidence is ``likelihood`` / 10 (PDL's 1-10 score that the record is the one asked
for). Contact fields a plan does not include come back as ``true`` instead of a value; they are
skipped.

Statuses, as PDL documents them: 404 no match (not an error; not charged); 401 a missing or invalid
key; 402 out of credits; 429 the rate limit (``Retry-After``, else ``x-ratelimit-reset``, an ISO 8601
time in current docs and epoch seconds in older ones); 400 and 405 a bad request; 5xx PDL's own
failure. A 403 is read as a refused key, as the key is the only thing a request carries that PDL can
refuse.
"""

from __future__ import annotations

from typing import Any, ClassVar

import httpx

from vpx.enrichment.providers import _http
from vpx.enrichment.providers.base import BusinessQuery, Found, PersonQuery

_STATUSES = _http.Statuses(
    no_match=frozenset({404}),
    auth_failed=frozenset({401, 403}),
    quota_exhausted=frozenset({402}),
    rate_limited=frozenset({429}),
)
_COMPANY_ENRICH = "/v5/company/enrich"
_PERSON_ENRICH = "/v5/person/enrich"
_LIKELIHOOD_SCALE = 10
# A decision-maker matched with less confidence than this is more likely someone else of the same
# name; 6 is the floor PDL's own examples use.
MIN_PERSON_LIKELIHOOD = 6


class PeopleDataLabs:
    """People Data Labs' Company and Person Enrichment APIs."""

    name: ClassVar[str] = "pdl"
    title: ClassVar[str] = "People Data Labs"
    default_base_url: ClassVar[str] = "https://api.peopledatalabs.com"
    business_fields: ClassVar[frozenset[str]] = frozenset({"website", "linkedin_url", "employee_count"})
    person_fields: ClassVar[frozenset[str]] = frozenset({"email", "phone", "title", "linkedin_url"})

    def business_request(self, query: BusinessQuery) -> str | None:
        request = _business_request(query)
        return request.canonical() if request else None

    def person_request(self, query: PersonQuery) -> str | None:
        request = _person_request(query)
        return request.canonical() if request else None

    async def find_business(
        self, client: httpx.AsyncClient, base_url: str, api_key: str, query: BusinessQuery
    ) -> Found | None:
        request = _business_request(query)
        if request is None:
            return None
        body = await self._send(client, base_url, api_key, request)
        return _company(body) if body is not None else None

    async def find_person(
        self, client: httpx.AsyncClient, base_url: str, api_key: str, query: PersonQuery
    ) -> Found | None:
        request = _person_request(query)
        if request is None:
            return None
        body = await self._send(client, base_url, api_key, request)
        return _person(body) if body is not None else None

    async def _send(
        self, client: httpx.AsyncClient, base_url: str, api_key: str, request: _http.Request
    ) -> _http.JSONObject | None:
        return await _http.send(
            client,
            base_url,
            request,
            title=self.title,
            key_header="X-Api-Key",
            api_key=api_key,
            statuses=_STATUSES,
        )


def _place(query: BusinessQuery) -> tuple[tuple[str, str], ...]:
    place = (("locality", _http.clean(query.city)), ("region", _http.clean(query.state)))
    return tuple((name, value) for name, value in place if value)


def _business_request(query: BusinessQuery) -> _http.Request | None:
    name = _http.clean(query.name)
    domain = _http.domain(query.domain)
    if not name and not domain:
        return None
    params: tuple[tuple[str, str], ...] = (("name", name),) if name else ()
    if domain:
        params += (("website", domain),)
    return _http.Request("GET", _COMPANY_ENRICH, params + _place(query))


def _person_request(query: PersonQuery) -> _http.Request | None:
    first, last = _http.clean(query.first_name), _http.clean(query.last_name)
    full = _http.clean(query.full_name)
    if first and last:
        names: tuple[tuple[str, str], ...] = (("first_name", first), ("last_name", last))
    elif full:
        names = (("name", full),)
    else:
        return None
    company = _http.domain(query.business.domain) or _http.clean(query.business.name)
    where = (("company", company),) if company else ()
    params = names + where + _place(query.business)
    if len(params) == len(names):
        return None  # PDL needs a name and something to place it: a company or a location
    return _http.Request("GET", _PERSON_ENRICH, (*params, ("min_likelihood", str(MIN_PERSON_LIKELIHOOD))))


def _no_match(body: _http.JSONObject) -> bool:
    # The answer repeats the HTTP status; a 404 inside a 200 is still no match.
    return body.get("status") == 404


def _company(body: _http.JSONObject) -> Found | None:
    if _no_match(body):
        return None
    # Company Enrichment answers the record at the top level; accept a data object too.
    record = body["data"] if isinstance(body.get("data"), dict) else body
    found = _http.values(
        {
            "website": _http.website(record.get("website")),
            "linkedin_url": _http.linkedin_url(record.get("linkedin_url")),
            "employee_count": _http.employee_count(record.get("employee_count"))
            or _http.employee_count(record.get("size")),
        },
        confidence=_http.ratio(body.get("likelihood"), _LIKELIHOOD_SCALE),
    )
    if not found:
        return None
    return Found(found, record_id=_http.text(record.get("id")))


def _person(body: _http.JSONObject) -> Found | None:
    record: Any = body.get("data")
    if _no_match(body) or not isinstance(record, dict):
        return None
    found = _http.values(
        {
            "email": _http.text(record.get("work_email")),
            "phone": _http.phone(record.get("mobile_phone")) or _http.phone(_http.first(record.get("phone_numbers"))),
            "title": _http.text(record.get("job_title")),
            "linkedin_url": _http.linkedin_url(record.get("linkedin_url")),
        },
        confidence=_http.ratio(body.get("likelihood"), _LIKELIHOOD_SCALE),
    )
    if not found:
        return None
    return Found(found, record_id=_http.text(record.get("id")))
