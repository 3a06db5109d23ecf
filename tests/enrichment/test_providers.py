"""The adapters' conformance kit: every built-in adapter, over real HTTP to the local fakes, maps a
match, reads every documented miss as None, turns every refusal into the right ProviderError, and
sends its key only in a header."""

from __future__ import annotations

import base64
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from urllib.parse import quote

import httpx
import pytest

from tests.enrichment.fakes import FakeProviders, record_id, sample_companies, sample_people
from vpx.enrichment.providers import _http, provider_names
from vpx.enrichment.providers.apollo import Apollo
from vpx.enrichment.providers.base import (
    AUTH_FAILED,
    BAD_RESPONSE,
    BUSINESS_FIELDS,
    PERSON_FIELDS,
    QUOTA_EXHAUSTED,
    RATE_LIMITED,
    TIMEOUT,
    UNAVAILABLE,
    BusinessQuery,
    Found,
    FoundValue,
    PersonQuery,
    Provider,
    ProviderError,
)
from vpx.enrichment.providers.hunter import Hunter
from vpx.enrichment.providers.pdl import PeopleDataLabs

ACME, BRIGHT_SMILE, _ = sample_companies()
MARIA, JAMES = sample_people()
BUSINESS = BusinessQuery(name="Acme Plumbing, LLC", city="Austin", state="TX", domain="acmeplumbing.com")
PERSON = PersonQuery(full_name="Maria Lopez", first_name="Maria", last_name="Lopez", business=BUSINESS)
UNKNOWN_BUSINESS = BusinessQuery(name="Nobody Here Inc", city="Nowhere", state="ZZ", domain="nobody-here.example")
UNKNOWN_PERSON = PersonQuery(full_name="Zed Zulu", first_name="Zed", last_name="Zulu", business=BUSINESS)
LINKEDIN_ACME = "https://www.linkedin.com/company/acme-plumbing"
LINKEDIN_MARIA = "https://www.linkedin.com/in/maria-lopez-acme"


@dataclass(frozen=True)
class Case:
    """One adapter and what its provider documents."""

    provider: Provider
    business: dict[str, FoundValue]
    business_record_id: str | None
    person: dict[str, FoundValue]
    person_record_id: str | None
    quota_status: int | None  # None: the provider documents no status for spent credits
    rate_status: int


CASES = [
    Case(
        Hunter(),
        business={
            "website": FoundValue("https://acmeplumbing.com"),
            "linkedin_url": FoundValue(LINKEDIN_ACME),
            "employee_count": FoundValue("11-50"),  # Hunter gives a range
            "phone": FoundValue("+15125550143"),
            "email": FoundValue("info@acmeplumbing.com"),
        },
        business_record_id=record_id("hunter", ACME),
        person={
            "email": FoundValue("maria@acmeplumbing.com", 0.92),
            "title": FoundValue("Owner"),
            "linkedin_url": FoundValue(LINKEDIN_MARIA),
            "phone": FoundValue("+15125550101"),
        },
        person_record_id=None,
        quota_status=429,
        rate_status=403,
    ),
    Case(
        PeopleDataLabs(),
        business={
            "website": FoundValue("https://acmeplumbing.com", 0.8),
            "linkedin_url": FoundValue(LINKEDIN_ACME, 0.8),
            "employee_count": FoundValue(42, 0.8),
        },
        business_record_id=record_id("pdl", ACME),
        person={
            "email": FoundValue("maria@acmeplumbing.com", 0.9),
            "title": FoundValue("owner", 0.9),  # PDL writes every value in lower case
            "linkedin_url": FoundValue(LINKEDIN_MARIA, 0.9),
            "phone": FoundValue("+15125550101", 0.9),
        },
        person_record_id=record_id("pdl", MARIA),
        quota_status=402,
        rate_status=429,
    ),
    Case(
        Apollo(),
        business={
            "website": FoundValue("https://acmeplumbing.com"),
            "linkedin_url": FoundValue(LINKEDIN_ACME),
            "employee_count": FoundValue(42),
            "phone": FoundValue("+15125550143"),
        },
        business_record_id=record_id("apollo", ACME),
        person={
            "email": FoundValue("maria@acmeplumbing.com"),
            "title": FoundValue("Owner"),
            "linkedin_url": FoundValue(LINKEDIN_MARIA),
            "phone": FoundValue("+15125550101"),
        },
        person_record_id=record_id("apollo", MARIA),
        quota_status=None,
        rate_status=429,
    ),
]
each_adapter = pytest.mark.parametrize("case", CASES, ids=[case.provider.name for case in CASES])


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=5) as client:
        yield client


async def _business(
    case: Case, fakes: FakeProviders, http: httpx.AsyncClient, query: BusinessQuery = BUSINESS
) -> Found | None:
    fake = fakes[case.provider.name]
    return await case.provider.find_business(http, fake.base_url, fake.api_key, query)


async def _person(
    case: Case, fakes: FakeProviders, http: httpx.AsyncClient, query: PersonQuery = PERSON
) -> Found | None:
    fake = fakes[case.provider.name]
    return await case.provider.find_person(http, fake.base_url, fake.api_key, query)


async def _refusal(case: Case, fakes: FakeProviders, http: httpx.AsyncClient) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await _person(case, fakes, http)
    assert fakes[case.provider.name].api_key not in caught.value.message
    return caught.value


@each_adapter
def test_adapter_implements_the_provider_protocol(case: Case) -> None:
    provider = case.provider
    assert isinstance(provider, Provider)
    assert provider.name in provider_names()
    assert provider.default_base_url.startswith("https://") and not provider.default_base_url.endswith("/")
    assert provider.business_fields <= set(BUSINESS_FIELDS) and provider.person_fields <= set(PERSON_FIELDS)


@each_adapter
async def test_business_match_maps_fields_and_record_id(
    case: Case, fakes: FakeProviders, http: httpx.AsyncClient
) -> None:
    found = await _business(case, fakes, http)
    assert found is not None
    assert found.values == case.business
    assert found.record_id == case.business_record_id
    assert set(case.business) <= case.provider.business_fields


@each_adapter
async def test_person_match_maps_fields_and_record_id(
    case: Case, fakes: FakeProviders, http: httpx.AsyncClient
) -> None:
    found = await _person(case, fakes, http)
    assert found is not None
    assert found.values == case.person
    assert found.record_id == case.person_record_id
    assert set(case.person) <= case.provider.person_fields


@each_adapter
async def test_every_documented_no_match_form_is_none(
    case: Case, fakes: FakeProviders, http: httpx.AsyncClient
) -> None:
    fake = fakes[case.provider.name]
    for form in fake.no_match_forms:
        fake.no_match_as(form)
        assert await _business(case, fakes, http, UNKNOWN_BUSINESS) is None, form
        assert await _person(case, fakes, http, UNKNOWN_PERSON) is None, form


@each_adapter
async def test_an_empty_or_null_answer_is_no_match(case: Case, fakes: FakeProviders, http: httpx.AsyncClient) -> None:
    bodies = {
        "hunter": [b'{"data": null}', b'{"data": {}}', b'{"data": {"email": null, "score": null}}'],
        "pdl": [b'{"status": 200, "data": null}', b'{"status": 200, "data": {}}', b'{"status": 404}'],
        "apollo": [b"{}", b'{"person": null}', b'{"person": {}}'],
    }[case.provider.name]
    for body in bodies:
        fakes[case.provider.name].fail_next(200, body=body)
        assert await _person(case, fakes, http) is None, body


@each_adapter
async def test_a_wrong_key_is_refused(case: Case, fakes: FakeProviders, http: httpx.AsyncClient) -> None:
    fake = fakes[case.provider.name]
    with pytest.raises(ProviderError) as caught:
        await case.provider.find_business(http, fake.base_url, "not-the-key", BUSINESS)
    assert caught.value.code == AUTH_FAILED and caught.value.status == 401
    assert "not-the-key" not in caught.value.message


@each_adapter
async def test_spent_credits_are_quota_exhausted(case: Case, fakes: FakeProviders, http: httpx.AsyncClient) -> None:
    if case.quota_status is None:
        pytest.skip(f"{case.provider.title} documents no status for an account out of credits")
    fakes[case.provider.name].fail_next(case.quota_status)
    error = await _refusal(case, fakes, http)
    assert error.code == QUOTA_EXHAUSTED and error.retry_after is None


@each_adapter
async def test_a_rate_limit_carries_retry_after(case: Case, fakes: FakeProviders, http: httpx.AsyncClient) -> None:
    fakes[case.provider.name].fail_next(case.rate_status, retry_after="2")
    error = await _refusal(case, fakes, http)
    assert error.code == RATE_LIMITED and error.retry_after == 2


@each_adapter
@pytest.mark.parametrize("status", [500, 503])
async def test_a_server_error_is_unavailable(
    case: Case, status: int, fakes: FakeProviders, http: httpx.AsyncClient
) -> None:
    fakes[case.provider.name].fail_next(status)
    error = await _refusal(case, fakes, http)
    assert error.code == UNAVAILABLE and error.status == status


@each_adapter
async def test_a_refused_connection_is_unavailable(case: Case, http: httpx.AsyncClient) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with pytest.raises(ProviderError) as caught:
        await case.provider.find_business(http, closed, "secret-key", BUSINESS)
    assert caught.value.code == UNAVAILABLE and "secret-key" not in caught.value.message


@each_adapter
async def test_a_slow_provider_times_out(case: Case, fakes: FakeProviders) -> None:
    fake = fakes[case.provider.name]
    fake.latency = 0.5
    async with httpx.AsyncClient(timeout=0.1) as client:
        with pytest.raises(ProviderError) as caught:
            await case.provider.find_business(client, fake.base_url, fake.api_key, BUSINESS)
    assert caught.value.code == TIMEOUT


@each_adapter
@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b"\xff\xfe"])
async def test_an_unreadable_answer_is_a_bad_response(
    case: Case, body: bytes, fakes: FakeProviders, http: httpx.AsyncClient
) -> None:
    fakes[case.provider.name].fail_next(200, body=body)
    assert (await _refusal(case, fakes, http)).code == BAD_RESPONSE


@each_adapter
async def test_an_unexpected_client_error_is_a_bad_response_without_the_key(
    case: Case, fakes: FakeProviders, http: httpx.AsyncClient
) -> None:
    fake = fakes[case.provider.name]
    fake.fail_next(400, body=f'{{"error": "bad request from key {fake.api_key}"}}'.encode())
    error = await _refusal(case, fakes, http)
    assert error.code == BAD_RESPONSE and error.status == 400 and "bad request" not in error.message


def _echoes(key: str) -> list[str]:
    """What a provider could send back holding the key: as sent, in another case, URL-encoded, in
    base64, and placed so that the key straddles the first 200 characters (where a quote of the body
    would once be cut before the key was looked for)."""
    forms = [key, key.upper(), key.swapcase(), quote(key, safe=""), base64.b64encode(key.encode()).decode()]
    echoes = [f'{{"error": "invalid api key {form}"}}' for form in forms]
    echoes += ["x" * (200 - cut) + key + " trailing" for cut in (1, 5, 11, len(key) - 1)]
    echoes += ["x" * (200 - cut) + key.upper() for cut in (3, 11)]
    return echoes


@each_adapter
@pytest.mark.parametrize("status", [400, 401, 402, 403, 422, 429, 500, 503])
async def test_a_providers_error_body_is_never_quoted(
    case: Case, status: int, fakes: FakeProviders, http: httpx.AsyncClient
) -> None:
    """The customer sees a fixed reason and the HTTP status, never the provider's text: a provider
    that echoes the key (in any case or encoding, anywhere in its body) cannot leak any of it."""
    fake = fakes[case.provider.name]
    secret = fake.api_key.removeprefix(f"{case.provider.name}-")  # the part no title or reason holds
    for echo in _echoes(fake.api_key):
        fake.fail_next(status, body=echo.encode())
        error = await _refusal(case, fakes, http)
        shown = error.message.lower()
        assert f"http {status}" in shown, error.message
        assert "test" not in shown, echo  # any piece of the key past the provider's name
        assert "-key" not in shown and secret not in shown and quote(secret) not in shown, echo
        assert base64.b64encode(fake.api_key.encode()).decode()[:8].lower() not in shown, echo
        assert "xxx" not in shown and "error" not in shown and "trailing" not in shown, echo  # nothing quoted


@each_adapter
async def test_the_key_travels_only_in_a_header(case: Case, fakes: FakeProviders, http: httpx.AsyncClient) -> None:
    fake = fakes[case.provider.name]
    await _business(case, fakes, http)
    await _person(case, fakes, http)
    assert len(fake.requests) == 2
    for request in fake.requests:
        assert fake.api_key not in request.path
        assert all(fake.api_key not in key + value for key, value in request.query.items())
        assert fake.api_key.encode() not in request.body
        assert request.headers["x-api-key"] == fake.api_key


@each_adapter
def test_requests_are_canonical(case: Case) -> None:
    provider = case.provider
    shouted = BusinessQuery(name="  ACME   Plumbing,  LLC ", city="AUSTIN", state="tx", domain="AcmePlumbing.com")
    shouted_person = PersonQuery(full_name="MARIA  LOPEZ", first_name=" MARIA", last_name="lopez ", business=shouted)
    assert provider.business_request(BUSINESS) == provider.business_request(BUSINESS) is not None
    assert provider.business_request(shouted) == provider.business_request(BUSINESS)
    assert provider.business_request(UNKNOWN_BUSINESS) != provider.business_request(BUSINESS)
    assert provider.person_request(shouted_person) == provider.person_request(PERSON) is not None
    assert provider.person_request(UNKNOWN_PERSON) != provider.person_request(PERSON)


def test_apollo_is_not_asked_for_a_business_without_a_domain() -> None:
    no_domain = BusinessQuery(name="Corner Bakery Inc", city="Portland", state="OR")
    assert Apollo().business_request(no_domain) is None
    assert Hunter().business_request(no_domain) is not None
    assert PeopleDataLabs().business_request(no_domain) is not None


async def test_hunter_finds_a_business_without_a_domain_by_company_name(
    fakes: FakeProviders, http: httpx.AsyncClient
) -> None:
    query = BusinessQuery(name="ACME PLUMBING", city="Austin", state="TX")
    found = await Hunter().find_business(http, fakes.hunter.base_url, fakes.hunter.api_key, query)
    assert found is not None
    assert found.values == {
        "website": FoundValue("https://acmeplumbing.com"),
        "email": FoundValue("info@acmeplumbing.com", 0.94),
    }
    assert fakes.hunter.requests[-1].query == {"company": "ACME PLUMBING", "type": "generic"}


async def test_hunter_reads_451_as_no_match(fakes: FakeProviders, http: httpx.AsyncClient) -> None:
    fakes.hunter.fail_next(451)
    assert await Hunter().find_person(http, fakes.hunter.base_url, fakes.hunter.api_key, PERSON) is None


async def test_pdl_finds_a_business_by_name_and_place(fakes: FakeProviders, http: httpx.AsyncClient) -> None:
    query = BusinessQuery(name="Bright Smile Dental", city="Denver", state="CO")
    found = await PeopleDataLabs().find_business(http, fakes.pdl.base_url, fakes.pdl.api_key, query)
    assert found is not None and found.record_id == record_id("pdl", BRIGHT_SMILE)
    elsewhere = BusinessQuery(name="Bright Smile Dental", city="Boise", state="ID")
    assert await PeopleDataLabs().find_business(http, fakes.pdl.base_url, fakes.pdl.api_key, elsewhere) is None


async def test_pdl_rate_limit_reads_x_ratelimit_reset(fakes: FakeProviders, http: httpx.AsyncClient) -> None:
    reset = (datetime.now(UTC) + timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%SZ")
    fakes.pdl.fail_next(429, headers={"x-ratelimit-reset": reset})
    with pytest.raises(ProviderError) as caught:
        await PeopleDataLabs().find_person(http, fakes.pdl.base_url, fakes.pdl.api_key, PERSON)
    assert caught.value.code == RATE_LIMITED
    assert caught.value.retry_after is not None and 25 <= caught.value.retry_after <= 30


@pytest.mark.parametrize(("provider", "status"), [(PeopleDataLabs(), 403), (Apollo(), 403)], ids=["pdl", "apollo"])
async def test_403_is_a_refused_key_where_it_means_one(
    provider: Provider, status: int, fakes: FakeProviders, http: httpx.AsyncClient
) -> None:
    fake = fakes[provider.name]
    fake.fail_next(status)
    with pytest.raises(ProviderError) as caught:
        await provider.find_person(http, fake.base_url, fake.api_key, PERSON)
    assert caught.value.code == AUTH_FAILED


@pytest.mark.parametrize("status", [404, 422])
async def test_apollo_reads_404_and_422_as_bad_responses(
    status: int, fakes: FakeProviders, http: httpx.AsyncClient
) -> None:
    fakes.apollo.fail_next(status)
    with pytest.raises(ProviderError) as caught:
        await Apollo().find_business(http, fakes.apollo.base_url, fakes.apollo.api_key, BUSINESS)
    assert caught.value.code == BAD_RESPONSE


async def test_apollo_does_not_return_its_locked_email_placeholder(
    fakes: FakeProviders, http: httpx.AsyncClient
) -> None:
    business = BusinessQuery(name="Bright Smile Dental PC", city="Denver", state="CO", domain="brightsmile.example")
    query = PersonQuery(full_name="James Chen", first_name="James", last_name="Chen", business=business)
    found = await Apollo().find_person(http, fakes.apollo.base_url, fakes.apollo.api_key, query)
    assert found is not None and "email" not in found.values
    assert found.values["title"] == FoundValue(JAMES.title or "")


def test_a_fake_refuses_a_no_match_form_its_provider_does_not_document(fakes: FakeProviders) -> None:
    with pytest.raises(ValueError, match="apollo"):
        fakes.apollo.no_match_as("404")


def test_retry_after_reads_seconds_dates_and_resets() -> None:
    now = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)

    def wait(**headers: str) -> float | None:
        return _http.retry_after(httpx.Response(429, headers=headers), now=now.timestamp())

    assert wait(**{"Retry-After": "7"}) == 7
    assert wait(**{"Retry-After": format_datetime(now + timedelta(seconds=90), usegmt=True)}) == 90
    assert wait(**{"x-ratelimit-reset": str(int(now.timestamp()) + 12)}) == 12
    assert wait(**{"x-ratelimit-reset": "2026-11-20T12:00:05Z"}) == 5
    assert wait(**{"Retry-After": "soon"}) is None
    assert wait() is None


class _Directory:
    """A third party's adapter, as a package would register it (knows nothing: no match)."""

    name = "directory"
    title = "A directory"
    default_base_url = "https://directory.example"
    business_fields = frozenset({"phone"})
    person_fields: frozenset[str] = frozenset()

    def business_request(self, query: BusinessQuery) -> str | None:
        return f"name={query.name.lower()}"

    def person_request(self, query: PersonQuery) -> str | None:
        return None

    async def find_business(self, client: httpx.AsyncClient, base_url: str, api_key: str, query: BusinessQuery) -> None:
        return None

    async def find_person(self, client: httpx.AsyncClient, base_url: str, api_key: str, query: PersonQuery) -> None:
        return None


def test_a_third_party_adapter_is_found_by_its_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib.metadata import EntryPoint

    from vpx.enrichment import providers

    points = [
        EntryPoint("directory", f"{__name__}:_Directory", providers.GROUP),
        EntryPoint("broken", "no_such_module:Adapter", providers.GROUP),
    ]
    monkeypatch.setattr(providers, "entry_points", lambda group: points if group == providers.GROUP else [])
    providers.registered.cache_clear()
    try:
        found = providers.registered()
        assert {"hunter", "pdl", "apollo", "directory"} <= set(found) and "broken" not in found
        assert found["directory"].business_fields == frozenset({"phone"})
    finally:
        providers.registered.cache_clear()
