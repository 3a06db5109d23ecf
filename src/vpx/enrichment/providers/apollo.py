"""Apollo (https://docs.apollo.io), with the customer's key in the ``X-Api-Key`` header (never the
``api_key`` parameter Apollo once accepted).

A business: ``GET /api/v1/organizations/enrich?domain=`` (Organization Enrichment). The domain is
required, so without one ``business_request`` is None and Apollo is not asked:

  ============== =========================================================
  website        ``organization.website_url`` (``http://www.acme.com``)
  linkedin_url   ``organization.linkedin_url``
  employee_count ``organization.estimated_num_employees``
  phone          ``organization.primary_phone.sanitized_number`` (or ``.number``),
                 else ``organization.sanitized_phone`` or ``organization.phone``
  record_id      ``organization.id``
  ============== =========================================================

A person: ``POST /api/v1/people/match`` (People Enrichment) with ``first_name`` and ``last_name``
(``name`` when the registry gave no split), ``organization_name`` and ``domain``, as query
parameters as Apollo documents them. Personal emails and phone reveals are not asked for: they cost
extra credits and a phone reveal is delivered later to a webhook:

  ============== =========================================================
  email          ``person.email`` (not Apollo's ``email_not_unlocked@...`` placeholder)
  title          ``person.title``
  linkedin_url   ``person.linkedin_url``
  phone          ``person.phone_numbers[0].sanitized_number`` (or ``.raw_number``), when present
  record_id      ``person.id``
  ============== =========================================================

A 200 with ``"person": null`` / ``"organization": null``, or ``{}``, is no match. Statuses, as Apollo
documents them: 401 invalid credentials and 403 a key this endpoint does not accept (both a refused
key); 422 misconfigured parameters; 429 too many requests (with ``Retry-After``). Apollo documents
no status for spent credits. Its 404 means "the endpoint does not exist", not "no such company":
it is read as a bad response, so a wrong base URL fails loudly instead of looking like a miss.
"""

from __future__ import annotations

from typing import Any, ClassVar

import httpx

from vpx.enrichment.providers import _http
from vpx.enrichment.providers.base import BusinessQuery, Found, PersonQuery

_STATUSES = _http.Statuses(
    no_match=frozenset(),
    auth_failed=frozenset({401, 403}),
    quota_exhausted=frozenset(),
    rate_limited=frozenset({429}),
)
_ORGANIZATION_ENRICH = "/api/v1/organizations/enrich"
_PEOPLE_MATCH = "/api/v1/people/match"
# What Apollo writes in place of an address the account has not unlocked.
_LOCKED_EMAIL_PREFIX = "email_not_unlocked@"


class Apollo:
    """Apollo's Organization Enrichment and People Enrichment."""

    name: ClassVar[str] = "apollo"
    title: ClassVar[str] = "Apollo"
    default_base_url: ClassVar[str] = "https://api.apollo.io"
    business_fields: ClassVar[frozenset[str]] = frozenset({"phone", "website", "linkedin_url", "employee_count"})
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
        return _organization(body.get("organization")) if body is not None else None

    async def find_person(
        self, client: httpx.AsyncClient, base_url: str, api_key: str, query: PersonQuery
    ) -> Found | None:
        request = _person_request(query)
        if request is None:
            return None
        body = await self._send(client, base_url, api_key, request)
        return _person(body.get("person")) if body is not None else None

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


def _business_request(query: BusinessQuery) -> _http.Request | None:
    domain = _http.domain(query.domain)
    if not domain:
        return None
    return _http.Request("GET", _ORGANIZATION_ENRICH, (("domain", domain),))


def _person_request(query: PersonQuery) -> _http.Request | None:
    first, last = _http.clean(query.first_name), _http.clean(query.last_name)
    full = _http.clean(query.full_name)
    if first and last:
        names: tuple[tuple[str, str], ...] = (("first_name", first), ("last_name", last))
    elif full:
        names = (("name", full),)
    else:
        return None
    company = _http.clean(query.business.name)
    domain = _http.domain(query.business.domain)
    where = ((("organization_name", company),) if company else ()) + ((("domain", domain),) if domain else ())
    if not where:
        return None
    return _http.Request("POST", _PEOPLE_MATCH, names + where)


def _organization(organization: Any) -> Found | None:
    if not isinstance(organization, dict) or not organization:
        return None
    primary = _http.child(organization, "primary_phone")
    phone = (
        _http.phone(primary.get("sanitized_number"))
        or _http.phone(primary.get("number"))
        or _http.phone(organization.get("sanitized_phone"))
        or _http.phone(organization.get("phone"))
    )
    site = _http.website(organization.get("website_url")) or _http.website(organization.get("primary_domain"))
    found = _http.values(
        {
            "website": site,
            "linkedin_url": _http.linkedin_url(organization.get("linkedin_url")),
            "employee_count": _http.employee_count(organization.get("estimated_num_employees")),
            "phone": phone,
        }
    )
    if not found:
        return None
    return Found(found, record_id=_http.text(organization.get("id")))


def _person(person: Any) -> Found | None:
    if not isinstance(person, dict) or not person:
        return None
    email = _http.text(person.get("email"))
    if email and email.lower().startswith(_LOCKED_EMAIL_PREFIX):
        email = None
    number = _http.as_object(_http.first(person.get("phone_numbers")))
    found = _http.values(
        {
            "email": email,
            "title": _http.text(person.get("title")),
            "linkedin_url": _http.linkedin_url(person.get("linkedin_url")),
            "phone": _http.phone(number.get("sanitized_number")) or _http.phone(number.get("raw_number")),
        }
    )
    if not found:
        return None
    return Found(found, record_id=_http.text(person.get("id")))
