"""Hunter (API v2, https://hunter.io/api-documentation/v2), with the customer's key in the
``X-API-KEY`` header (Hunter also accepts an ``api_key`` query parameter, which would put the key in
URLs and logs).

A business, by what the query holds:

- with a domain, ``GET /v2/companies/find?domain=`` (Company Enrichment: 200 with ``data``, 404 when
  Hunter does not know the domain), because it answers four of the five fields at once:

  ============== =========================================================
  website        ``data.domain``
  linkedin_url   ``data.linkedin.handle`` (``company/acme``)
  employee_count ``data.metrics.employees`` (a range such as ``"11-50"``)
  phone          ``data.phone``, else ``data.site.phoneNumbers[0]``
  email          ``data.site.emailAddresses[0]``
  record_id      ``data.id``
  ============== =========================================================

- without one, ``GET /v2/domain-search?company=NAME&type=generic`` (Domain Search by company name;
  only role addresses such as ``info@``, since a person's address is not the business's):

  ============== =========================================================
  website        ``data.domain``
  email          the generic ``data.emails[].value`` with the highest ``confidence`` (0-100)
  phone          that entry's ``phone_number``
  record_id      ``data.domain``
  ============== =========================================================

A person: ``GET /v2/email-finder`` with ``first_name`` and ``last_name`` (``full_name`` when the
registry gave no split) and ``domain`` (else ``company``):

  ============== =========================================================
  email          ``data.email``, confidence ``data.score`` / 100
  title          ``data.position``
  linkedin_url   ``data.linkedin_url``
  phone          ``data.phone_number``
  ============== =========================================================

Statuses, as Hunter documents them: 401 no valid key; **403 the rate limit; 429 the monthly usage
limit** (the reverse of most APIs: 429 is never retried); 404 no such resource (no match); 451 the
person asked Hunter to stop processing their data (no match for us too). Hunter sends no
Retry-After, so a 403 carries none.
"""

from __future__ import annotations

from typing import Any, ClassVar

import httpx

from vpx.enrichment.providers import _http
from vpx.enrichment.providers.base import BUSINESS_FIELDS, BusinessQuery, Found, PersonQuery

_STATUSES = _http.Statuses(
    no_match=frozenset({404, 451}),
    auth_failed=frozenset({401}),
    quota_exhausted=frozenset({429}),
    rate_limited=frozenset({403}),
)
_COMPANIES_FIND = "/v2/companies/find"
_DOMAIN_SEARCH = "/v2/domain-search"
_EMAIL_FINDER = "/v2/email-finder"
_SCORE_SCALE = 100


class Hunter:
    """Hunter's Company Enrichment, Domain Search and Email Finder."""

    name: ClassVar[str] = "hunter"
    title: ClassVar[str] = "Hunter"
    default_base_url: ClassVar[str] = "https://api.hunter.io"
    business_fields: ClassVar[frozenset[str]] = frozenset(BUSINESS_FIELDS)
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
        if body is None:
            return None
        if request.path == _COMPANIES_FIND:
            return _company(body.get("data"))
        return _domain_search(body.get("data"))

    async def find_person(
        self, client: httpx.AsyncClient, base_url: str, api_key: str, query: PersonQuery
    ) -> Found | None:
        request = _person_request(query)
        if request is None:
            return None
        body = await self._send(client, base_url, api_key, request)
        return _email_finder(body.get("data")) if body is not None else None

    async def _send(
        self, client: httpx.AsyncClient, base_url: str, api_key: str, request: _http.Request
    ) -> _http.JSONObject | None:
        return await _http.send(
            client,
            base_url,
            request,
            title=self.title,
            key_header="X-API-KEY",
            api_key=api_key,
            statuses=_STATUSES,
        )


def _business_request(query: BusinessQuery) -> _http.Request | None:
    domain = _http.domain(query.domain)
    if domain:
        return _http.Request("GET", _COMPANIES_FIND, (("domain", domain),))
    name = _http.clean(query.name)
    if not name:
        return None
    return _http.Request("GET", _DOMAIN_SEARCH, (("company", name), ("type", "generic")))


def _person_request(query: PersonQuery) -> _http.Request | None:
    first, last = _http.clean(query.first_name), _http.clean(query.last_name)
    full = _http.clean(query.full_name)
    if first and last:
        names: tuple[tuple[str, str], ...] = (("first_name", first), ("last_name", last))
    elif full:
        names = (("full_name", full),)
    else:
        return None
    domain = _http.domain(query.business.domain)
    company = _http.clean(query.business.name)
    if domain:
        where: tuple[tuple[str, str], ...] = (("domain", domain),)
    elif company:
        where = (("company", company),)
    else:
        return None
    return _http.Request("GET", _EMAIL_FINDER, names + where)


def _company(data: Any) -> Found | None:
    if not isinstance(data, dict) or not data:
        return None
    site = _http.child(data, "site")
    found = _http.values(
        {
            "website": _http.website(data.get("domain")),
            "linkedin_url": _http.linkedin_url(_http.child(data, "linkedin").get("handle")),
            "employee_count": _http.employee_count(_http.child(data, "metrics").get("employees")),
            "phone": _http.phone(data.get("phone")) or _http.phone(_http.first(site.get("phoneNumbers"))),
            "email": _http.text(_http.first(site.get("emailAddresses"))),
        }
    )
    if not found:
        return None
    return Found(found, record_id=_http.text(data.get("id")) or _http.domain(data.get("domain")))


def _domain_search(data: Any) -> Found | None:
    if not isinstance(data, dict):
        return None
    generic = [
        entry
        for entry in data.get("emails") or []
        if isinstance(entry, dict) and entry.get("type") == "generic" and _http.text(entry.get("value"))
    ]
    best = max(generic, key=lambda entry: _http.ratio(entry.get("confidence"), _SCORE_SCALE) or 0.0, default={})
    found = _http.values({"website": _http.website(data.get("domain"))})
    found |= _http.values(
        {"email": _http.text(best.get("value")), "phone": _http.phone(best.get("phone_number"))},
        confidence=_http.ratio(best.get("confidence"), _SCORE_SCALE),
        confident=frozenset({"email"}),
    )
    if not found:
        return None
    return Found(found, record_id=_http.domain(data.get("domain")))


def _email_finder(data: Any) -> Found | None:
    if not isinstance(data, dict):
        return None
    found = _http.values(
        {
            "email": _http.text(data.get("email")),
            "title": _http.text(data.get("position")),
            "linkedin_url": _http.linkedin_url(data.get("linkedin_url")),
            "phone": _http.phone(data.get("phone_number")),
        },
        confidence=_http.ratio(data.get("score"), _SCORE_SCALE),
        confident=frozenset({"email"}),
    )
    # An answer without an address is Hunter saying it found no one.
    if "email" not in found:
        return None
    return Found(found)
