"""Local fakes of Hunter, People Data Labs and Apollo: real HTTP on loopback, answering in each
provider's documented JSON shapes from a small shared data set, for the adapters' conformance tests
and for tests of the enrichment waterfall.

    fakes = start_fakes()            # once per process; the servers run in a background thread
    fakes.reset()                    # before each test: sample data, no failures, no latency
    fakes.pdl.fail_next(402)         # the next PDL request: out of credits
    fakes.hunter.no_match_as("null") # misses answered as 200 {"data": null}
    provider.find_business(client, fakes.pdl.base_url, fakes.pdl.api_key, query)

Each fake accepts only its ``api_key`` (any other key gets that provider's auth failure) and records
every request it receives, key included, so a test can check where the key travelled.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from vpx.contacts.normalise import name_key, phone_e164

JSONObject = dict[str, Any]
STARTUP_LIMIT_S = 10.0
PROVIDER_NAMES = ("hunter", "pdl", "apollo")


@dataclass
class FakeCompany:
    name: str
    domain: str | None = None
    city: str | None = None
    state: str | None = None
    phone: str | None = None
    email: str | None = None
    linkedin_url: str | None = None
    employee_count: int | None = None


@dataclass
class FakePerson:
    first_name: str
    last_name: str
    company_domain: str | None = None
    company_name: str | None = None
    email: str | None = None
    phone: str | None = None
    title: str | None = None
    linkedin_url: str | None = None


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # names in lower case
    body: bytes


def sample_companies() -> list[FakeCompany]:
    """The businesses every fake knows after ``reset()``."""
    return [
        FakeCompany(
            name="Acme Plumbing, LLC",
            domain="acmeplumbing.com",
            city="Austin",
            state="TX",
            phone="(512) 555-0143",
            email="info@acmeplumbing.com",
            linkedin_url="https://www.linkedin.com/company/acme-plumbing",
            employee_count=42,
        ),
        FakeCompany(
            name="Bright Smile Dental PC",
            domain="brightsmile.example",
            city="Denver",
            state="CO",
            phone="(303) 555-0188",
            email="hello@brightsmile.example",
            linkedin_url="https://www.linkedin.com/company/bright-smile-dental",
            employee_count=12,
        ),
        # Known by name only: no domain, so neither Hunter's Domain Search nor Apollo can find it.
        FakeCompany(name="Corner Bakery Inc", city="Portland", state="OR", employee_count=6),
    ]


def sample_people() -> list[FakePerson]:
    """The decision-makers every fake knows after ``reset()``."""
    return [
        FakePerson(
            first_name="Maria",
            last_name="Lopez",
            company_domain="acmeplumbing.com",
            company_name="Acme Plumbing, LLC",
            email="maria@acmeplumbing.com",
            phone="(512) 555-0101",
            title="Owner",
            linkedin_url="https://www.linkedin.com/in/maria-lopez-acme",
        ),
        FakePerson(
            first_name="James",
            last_name="Chen",
            company_domain="brightsmile.example",
            company_name="Bright Smile Dental PC",
            email=None,  # Apollo answers its locked-address placeholder; the others find no one
            phone="(303) 555-0177",
            title="Practice Manager",
            linkedin_url="https://www.linkedin.com/in/james-chen-dds",
        ),
    ]


def record_id(provider: str, record: FakeCompany | FakePerson) -> str:
    """The id the named fake gives a record (Hunter's companies have one; its people do not)."""
    if isinstance(record, FakeCompany):
        seed = f"company:{record.domain or name_key(record.name)}"
    else:
        seed = f"person:{record.first_name.lower()} {record.last_name.lower()}:{record.company_domain}"
    digest = uuid.uuid5(uuid.NAMESPACE_URL, f"{provider}:{seed}")
    if provider == "apollo":
        return digest.hex[:24]  # Apollo's ids are 24 hex digits
    if provider == "pdl":
        return digest.hex[:22] + ("_0000" if isinstance(record, FakePerson) else "")
    return str(digest)


@dataclass
class _Failure:
    status: int
    times: int
    retry_after: str | None
    body: bytes | None
    headers: dict[str, str]


class FakeProvider:
    """One provider's fake. Attributes are plain data a test may change; methods are thread-safe."""

    name: str = ""
    no_match_forms: tuple[str, ...] = ()  # the forms of "no match" this provider documents

    def __init__(self, api_key: str) -> None:
        self.api_key = api_key
        self.base_url = ""  # set when the server starts
        self.requests: list[RecordedRequest] = []
        self.latency = 0.0
        self.companies: list[FakeCompany] = []
        self.people: list[FakePerson] = []
        self.no_match = self.no_match_forms[0]
        self._failures: list[_Failure] = []
        self._lock = threading.Lock()
        self.reset()

    def fail_next(
        self,
        status: int,
        *,
        times: int = 1,
        retry_after: str | None = None,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """The next ``times`` requests answer ``status`` (with the provider's documented error body
        unless ``body``; ``Retry-After`` when given); then normal service resumes."""
        with self._lock:
            self._failures.append(_Failure(status, times, retry_after, body, dict(headers or {})))

    def no_match_as(self, form: str) -> None:
        """How a miss is answered: "404", "empty" (200 with empty data) or "null" (200 with null),
        among the forms this provider documents (``no_match_forms``)."""
        if form not in self.no_match_forms:
            raise ValueError(f"{self.name} documents no-match as {self.no_match_forms}, not {form!r}")
        self.no_match = form

    def reset(self) -> None:
        """Sample data back, failures and recorded requests cleared, no latency, default no-match."""
        with self._lock:
            self.requests.clear()
            self._failures.clear()
        self.latency = 0.0
        self.companies = sample_companies()
        self.people = sample_people()
        self.no_match = self.no_match_forms[0]

    # --- Serving ---

    async def handle(self, request: Request) -> Response:
        body = await request.body()
        recorded = RecordedRequest(
            method=request.method,
            path=request.url.path,
            query=dict(request.query_params),
            headers={name.lower(): value for name, value in request.headers.items()},
            body=body,
        )
        with self._lock:
            self.requests.append(recorded)
            failure = self._take_failure()
        if self.latency > 0:
            await asyncio.sleep(self.latency)
        if failure is not None:
            return self._failure(failure)
        if self.key_of(recorded) != self.api_key:
            return self.error(401)
        route = self.routes().get((recorded.method, recorded.path))
        if route is None:
            return self.error(404, "endpoint does not exist")
        params = dict(recorded.query)
        if body and recorded.headers.get("content-type", "").startswith("application/json"):
            try:
                decoded = json.loads(body)
            except ValueError:
                return self.error(400, "the body is not JSON")
            if isinstance(decoded, dict):
                params.update({key: str(value) for key, value in decoded.items()})
        return route(params)

    def _take_failure(self) -> _Failure | None:
        if not self._failures:
            return None
        failure = self._failures[0]
        failure.times -= 1
        if failure.times <= 0:
            self._failures.pop(0)
        return failure

    def _failure(self, failure: _Failure) -> Response:
        headers = dict(failure.headers)
        if failure.retry_after is not None:
            headers["Retry-After"] = failure.retry_after
        if failure.body is not None:
            return Response(failure.body, failure.status, headers=headers, media_type="application/json")
        return self.error(failure.status, headers=headers)

    def miss(self, empty: JSONObject, null: JSONObject) -> Response:
        """A no-match answer in the form set by ``no_match_as``."""
        if self.no_match == "404":
            return self.error(404)
        return JSONResponse(empty if self.no_match == "empty" else null)

    # --- What each provider defines ---

    def key_of(self, request: RecordedRequest) -> str | None:
        return request.headers.get("x-api-key") or request.query.get("api_key")

    def routes(self) -> dict[tuple[str, str], Callable[[dict[str, str]], Response]]:
        raise NotImplementedError

    def error(self, status: int, detail: str | None = None, *, headers: dict[str, str] | None = None) -> Response:
        raise NotImplementedError

    # --- Matching, shared by all three ---

    def company(
        self, *, domain: str | None = None, name: str | None = None, city: str | None = None, state: str | None = None
    ) -> FakeCompany | None:
        """A company by domain (exact, lower case) or by name (legal form and punctuation ignored);
        a given city or state must agree with the company's, when it has one."""
        for company in self.companies:
            if domain and company.domain and company.domain.lower() == _bare(domain):
                return company
            same_name = bool(name) and name_key(name or "") == name_key(company.name)
            if same_name and _agrees(city, company.city) and _agrees(state, company.state):
                return company
        return None

    def person(self, params: dict[str, str], *, company_params: tuple[str, ...]) -> FakePerson | None:
        """A person by first and last name (or a full name), at a company given by domain or name."""
        first, last = params.get("first_name", ""), params.get("last_name", "")
        full = params.get("full_name") or params.get("name")
        if not (first and last) and full and len(full.split()) >= 2:
            first, last = full.split()[0], full.split()[-1]
        companies = [params[key] for key in company_params if params.get(key)]
        if not (first and last and companies):
            return None
        for person in self.people:
            if person.first_name.lower() != first.lower() or person.last_name.lower() != last.lower():
                continue
            for company in companies:
                if person.company_domain and _bare(company) == person.company_domain.lower():
                    return person
                if person.company_name and name_key(company) == name_key(person.company_name):
                    return person
        return None

    def company_of(self, person: FakePerson) -> FakeCompany | None:
        return self.company(domain=person.company_domain, name=person.company_name)


def _bare(domain: str) -> str:
    host = domain.strip().lower()
    host = host.split("://", 1)[-1].split("/", 1)[0]
    return host.removeprefix("www.")


def _lower(value: str | None) -> str | None:
    return value.lower() if value else None


def _agrees(asked: str | None, known: str | None) -> bool:
    return not asked or not known or asked.strip().lower() == known.strip().lower()


def _handle_of(linkedin_url: str | None) -> str | None:
    """``company/acme`` from ``https://www.linkedin.com/company/acme`` (how Hunter writes it)."""
    if not linkedin_url:
        return None
    return linkedin_url.split("linkedin.com/", 1)[-1].strip("/")


def _bare_linkedin(linkedin_url: str | None) -> str | None:
    """``linkedin.com/in/x`` (how PDL writes it)."""
    handle = _handle_of(linkedin_url)
    return f"linkedin.com/{handle}" if handle else None


def _http_linkedin(linkedin_url: str | None) -> str | None:
    """``http://www.linkedin.com/in/x`` (how Apollo writes it)."""
    handle = _handle_of(linkedin_url)
    return f"http://www.linkedin.com/{handle}" if handle else None


def _size(count: int | None) -> str | None:
    """The head-count range Hunter and PDL write, e.g. ``"11-50"``."""
    if count is None:
        return None
    for low, high in ((1, 10), (11, 50), (51, 200), (201, 500), (501, 1000), (1001, 5000), (5001, 10000)):
        if count <= high:
            return f"{max(low, 1)}-{high}"
    return "10001+"


class FakeHunter(FakeProvider):
    """Hunter v2: ``/v2/companies/find``, ``/v2/domain-search``, ``/v2/email-finder``; errors as
    ``{"errors": [{"id", "code", "details"}]}``; 401 bad key, 403 rate limit, 429 monthly quota."""

    name = "hunter"
    no_match_forms = ("404", "empty", "null")
    _ERRORS: ClassVar[dict[int, tuple[str, str]]] = {
        400: ("wrong_params", "A required parameter is missing or invalid"),
        401: ("authentication_failed", "No valid API key was provided"),
        403: ("too_many_requests", "You have reached the rate limit"),
        404: ("not_found", "The requested resource does not exist"),
        429: ("too_many_requests", "You have reached your usage limit. Upgrade your plan if necessary"),
        451: ("claimed_email", "The owner asked to stop processing this data"),
    }

    def key_of(self, request: RecordedRequest) -> str | None:
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        return request.headers.get("x-api-key") or request.query.get("api_key") or bearer or None

    def routes(self) -> dict[tuple[str, str], Callable[[dict[str, str]], Response]]:
        return {
            ("GET", "/v2/companies/find"): self._companies_find,
            ("GET", "/v2/domain-search"): self._domain_search,
            ("GET", "/v2/email-finder"): self._email_finder,
        }

    def error(self, status: int, detail: str | None = None, *, headers: dict[str, str] | None = None) -> Response:
        error_id, details = self._ERRORS.get(status, ("server_error", "Something went wrong on Hunter's end"))
        body = {"errors": [{"id": error_id, "code": status, "details": detail or details}]}
        return JSONResponse(body, status, headers=headers)

    def _companies_find(self, params: dict[str, str]) -> Response:
        if not params.get("domain"):
            return self.error(400, "You are missing the domain parameter")
        meta = {"domain": params["domain"]}
        company = self.company(domain=params["domain"])
        if company is None:
            return self.miss({"data": {}, "meta": meta}, {"data": None, "meta": meta})
        handle = _handle_of(company.linkedin_url)
        data = {
            "id": record_id(self.name, company),
            "name": company.name,
            "legalName": company.name,
            "domain": company.domain,
            "site": {
                "phoneNumbers": [company.phone] if company.phone else [],
                "emailAddresses": [company.email] if company.email else [],
            },
            "geo": {"city": company.city, "stateCode": company.state, "country": "United States"},
            "linkedin": {"handle": handle},
            "phone": company.phone,
            "metrics": {"employees": _size(company.employee_count)},
        }
        return JSONResponse({"data": data, "meta": meta})

    def _domain_search(self, params: dict[str, str]) -> Response:
        if not params.get("domain") and not params.get("company"):
            return self.error(400, "You are missing the domain parameter")
        company = self.company(domain=params.get("domain"), name=params.get("company"))
        meta_params = {key: params.get(key) for key in ("domain", "company", "type")}
        if company is None or not company.domain:
            empty = {
                "data": {"domain": params.get("domain"), "organization": None, "pattern": None, "emails": []},
                "meta": {"results": 0, "limit": 10, "offset": 0, "params": meta_params},
            }
            return self.miss(empty, {"data": None, "meta": {"params": meta_params}})
        emails: list[JSONObject] = []
        if company.email:
            emails.append(_hunter_email(company.email, "generic", 94))
        for person in self.people:
            if person.email and person.company_domain == company.domain:
                emails.append(_hunter_email(person.email, "personal", 91, person))
        wanted = params.get("type")
        emails = [entry for entry in emails if not wanted or entry["type"] == wanted]
        data = {
            "domain": company.domain,
            "disposable": False,
            "webmail": False,
            "accept_all": False,
            "pattern": "{first}",
            "organization": company.name,
            "linked_domains": [],
            "emails": emails,
        }
        return JSONResponse(
            {"data": data, "meta": {"results": len(emails), "limit": 10, "offset": 0, "params": meta_params}}
        )

    def _email_finder(self, params: dict[str, str]) -> Response:
        person = self.person(params, company_params=("domain", "company"))
        meta = {
            "params": {key: params.get(key) for key in ("first_name", "last_name", "full_name", "domain", "company")}
        }
        if person is None or not person.email:
            empty = {
                "data": {
                    "first_name": params.get("first_name"),
                    "last_name": params.get("last_name"),
                    "email": None,
                    "score": None,
                    "domain": params.get("domain"),
                    "sources": [],
                },
                "meta": meta,
            }
            return self.miss(empty, {"data": None, "meta": meta})
        data = {
            "first_name": person.first_name,
            "last_name": person.last_name,
            "email": person.email,
            "score": 92,
            "domain": person.company_domain,
            "accept_all": False,
            "position": person.title,
            "twitter": None,
            "linkedin_url": person.linkedin_url,
            "phone_number": person.phone,
            "company": person.company_name,
            "sources": [],
            "verification": {"date": "2026-11-01", "status": "valid"},
        }
        return JSONResponse({"data": data, "meta": meta})


def _hunter_email(address: str, kind: str, confidence: int, person: FakePerson | None = None) -> JSONObject:
    return {
        "value": address,
        "type": kind,
        "confidence": confidence,
        "sources": [],
        "first_name": person.first_name if person else None,
        "last_name": person.last_name if person else None,
        "position": person.title if person else None,
        "linkedin": person.linkedin_url if person else None,
        "twitter": None,
        "phone_number": person.phone if person else None,
        "verification": {"date": "2026-11-01", "status": "valid"},
    }


class FakePDL(FakeProvider):
    """People Data Labs v5: ``/v5/company/enrich`` (fields at the top level) and
    ``/v5/person/enrich`` (record in ``data``); 404 is no match; errors as
    ``{"status", "error": {"type", "message"}}``."""

    name = "pdl"
    no_match_forms = ("404",)
    COMPANY_LIKELIHOOD = 8
    PERSON_LIKELIHOOD = 9
    _ERRORS: ClassVar[dict[int, tuple[str, str]]] = {
        400: ("invalid_request_error", "The request contained missing or invalid parameters"),
        401: ("authentication_error", "The request contained a missing or invalid key"),
        402: ("payment_required", "You have hit your account maximum (all matches used)"),
        403: ("forbidden_error", "The API key does not have access to this endpoint"),
        404: ("not_found", "No records were found matching your request"),
        405: ("invalid_request_error", "The request used a method that is not allowed"),
        429: ("rate_limit_error", "An error occurred due to requests hitting the API too quick"),
    }

    def routes(self) -> dict[tuple[str, str], Callable[[dict[str, str]], Response]]:
        return {
            ("GET", "/v5/company/enrich"): self._company_enrich,
            ("GET", "/v5/person/enrich"): self._person_enrich,
        }

    def error(self, status: int, detail: str | None = None, *, headers: dict[str, str] | None = None) -> Response:
        kind, message = self._ERRORS.get(status, ("api_error", "An internal error occurred"))
        return JSONResponse(
            {"status": status, "error": {"type": kind, "message": detail or message}}, status, headers=headers
        )

    def _company_enrich(self, params: dict[str, str]) -> Response:
        if not any(params.get(key) for key in ("name", "website", "profile", "ticker", "pdl_id")):
            return self.error(400, "name, website, profile, ticker or pdl_id is required")
        company = self.company(
            domain=params.get("website"),
            name=params.get("name"),
            city=params.get("locality"),
            state=params.get("region"),
        )
        if company is None or int(params.get("min_likelihood") or 0) > self.COMPANY_LIKELIHOOD:
            return self.miss({"status": 200}, {"status": 200, "data": None})
        return JSONResponse(
            {
                "status": 200,
                "id": record_id(self.name, company),
                "name": company.name.lower(),
                "display_name": company.name,
                "size": _size(company.employee_count),
                "employee_count": company.employee_count,
                "website": company.domain,
                "linkedin_url": _bare_linkedin(company.linkedin_url),
                "location": {"locality": _lower(company.city), "region": _lower(company.state)},
                "likelihood": self.COMPANY_LIKELIHOOD,
            }
        )

    def _person_enrich(self, params: dict[str, str]) -> Response:
        person = self.person(params, company_params=("company",))
        if person is None or int(params.get("min_likelihood") or 0) > self.PERSON_LIKELIHOOD:
            return self.miss({"status": 200, "data": {}}, {"status": 200, "data": None})
        mobile = phone_e164(person.phone) if person.phone else None
        data = {
            "id": record_id(self.name, person),
            "full_name": f"{person.first_name} {person.last_name}".lower(),
            "first_name": person.first_name.lower(),
            "last_name": person.last_name.lower(),
            "linkedin_url": _bare_linkedin(person.linkedin_url),
            "work_email": person.email,
            "mobile_phone": mobile,
            "phone_numbers": [mobile] if mobile else [],
            "job_title": person.title.lower() if person.title else None,
            "job_company_name": person.company_name.lower() if person.company_name else None,
            "job_company_website": person.company_domain,
        }
        return JSONResponse({"status": 200, "likelihood": self.PERSON_LIKELIHOOD, "data": data})


class FakeApollo(FakeProvider):
    """Apollo: ``GET /api/v1/organizations/enrich`` and ``POST /api/v1/people/match``; a miss is a 200
    with ``null`` (or ``{}``); 401/403 a refused key, 422 bad parameters, 429 too many requests."""

    name = "apollo"
    no_match_forms = ("null", "empty")
    _ERRORS: ClassVar[dict[int, tuple[str, str]]] = {
        400: ("INVALID_REQUEST", "Invalid request"),
        401: ("INVALID_CREDENTIALS", "Invalid access credentials."),
        403: ("API_INACCESSIBLE", "This endpoint is not accessible with this api_key"),
        404: ("NOT_FOUND", "The endpoint does not exist"),
        422: ("UNPROCESSABLE", "Parameters misconfigured"),
        429: ("RATE_LIMITED", "Too many requests"),
    }

    def key_of(self, request: RecordedRequest) -> str | None:
        return request.headers.get("x-api-key")

    def routes(self) -> dict[tuple[str, str], Callable[[dict[str, str]], Response]]:
        return {
            ("GET", "/api/v1/organizations/enrich"): self._organizations_enrich,
            ("POST", "/api/v1/people/match"): self._people_match,
        }

    def error(self, status: int, detail: str | None = None, *, headers: dict[str, str] | None = None) -> Response:
        code, message = self._ERRORS.get(status, ("INTERNAL_ERROR", "An unexpected error of application"))
        return JSONResponse({"error_code": code, "error_message": detail or message}, status, headers=headers)

    def _organizations_enrich(self, params: dict[str, str]) -> Response:
        if not params.get("domain"):
            return self.error(422, "domain is required")
        company = self.company(domain=params["domain"])
        if company is None:
            return self.miss({}, {"organization": None})
        return JSONResponse({"organization": self._organization(company)})

    def _organization(self, company: FakeCompany) -> JSONObject:
        sanitized = phone_e164(company.phone) if company.phone else None
        return {
            "id": record_id(self.name, company),
            "name": company.name,
            "website_url": f"http://www.{company.domain}" if company.domain else None,
            "linkedin_url": _http_linkedin(company.linkedin_url),
            "primary_phone": {"number": company.phone, "source": "Account", "sanitized_number": sanitized}
            if company.phone
            else {},
            "phone": company.phone,
            "sanitized_phone": sanitized,
            "estimated_num_employees": company.employee_count,
            "primary_domain": company.domain,
            "city": company.city,
            "state": company.state,
        }

    def _people_match(self, params: dict[str, str]) -> Response:
        person = self.person(params, company_params=("domain", "organization_name"))
        if person is None:
            return self.miss({}, {"person": None})
        company = self.company_of(person)
        sanitized = phone_e164(person.phone) if person.phone else None
        placeholder = f"email_not_unlocked@{person.company_domain or 'domain.com'}"
        return JSONResponse(
            {
                "person": {
                    "id": record_id(self.name, person),
                    "first_name": person.first_name,
                    "last_name": person.last_name,
                    "name": f"{person.first_name} {person.last_name}",
                    "linkedin_url": _http_linkedin(person.linkedin_url),
                    "title": person.title,
                    "email_status": "verified" if person.email else "unavailable",
                    "email": person.email or placeholder,
                    "organization_id": record_id(self.name, company) if company else None,
                    "organization": self._organization(company) if company else None,
                    "phone_numbers": [
                        {"raw_number": person.phone, "sanitized_number": sanitized, "type": "work_direct"}
                    ]
                    if person.phone
                    else [],
                }
            }
        )


class FakeProviders:
    """The three fakes, started together."""

    def __init__(self, hunter: FakeHunter, pdl: FakePDL, apollo: FakeApollo) -> None:
        self.hunter = hunter
        self.pdl = pdl
        self.apollo = apollo

    def __getitem__(self, name: str) -> FakeProvider:
        fakes: dict[str, FakeProvider] = {"hunter": self.hunter, "pdl": self.pdl, "apollo": self.apollo}
        return fakes[name]

    def __iter__(self) -> Iterator[FakeProvider]:
        return iter((self.hunter, self.pdl, self.apollo))

    def reset(self) -> None:
        for fake in self:
            fake.reset()


_started: FakeProviders | None = None
_start_lock = threading.Lock()


def start_fakes() -> FakeProviders:
    """Starts the three servers on free loopback ports (once per process) and returns them."""
    global _started
    with _start_lock:
        if _started is None:
            fakes = FakeProviders(FakeHunter("hunter-test-key"), FakePDL("pdl-test-key"), FakeApollo("apollo-test-key"))
            _started = _serve(fakes)
    return _started


def _serve(fakes: FakeProviders) -> FakeProviders:
    servers: list[tuple[uvicorn.Server, socket.socket]] = []
    for fake in fakes:
        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only then (else each answer waits ~40 ms for a delayed ACK).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        fake.base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        app = Starlette(routes=[Route("/{path:path}", fake.handle, methods=["GET", "POST"])])
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", loop="asyncio", http="h11")
        servers.append((uvicorn.Server(config), sock))

    async def serve_all() -> None:
        await asyncio.gather(*(server.serve(sockets=[sock]) for server, sock in servers))

    # uvicorn installs no signal handlers outside the main thread, so the servers live in a daemon
    # thread of their own, with their own event loop, beside the tests' loop.
    thread = threading.Thread(target=asyncio.run, args=(serve_all(),), name="enrichment-fakes", daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_LIMIT_S
    while not all(server.started for server, _ in servers):
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the enrichment provider fakes did not start")
        time.sleep(0.01)

    def stop() -> None:
        for server, _ in servers:
            server.should_exit = True
        thread.join(timeout=5)

    atexit.register(stop)
    return fakes
