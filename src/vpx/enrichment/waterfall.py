"""The waterfall (D32): providers asked one after another, each only for the fields still missing,
the first value found for a field winning, every value kept with where it came from.

A field is missing when the account can see no value for it: neither the registry record of a
contact it revealed, nor its own earlier enrichment (unless ``refresh``: then the fields asked for
are asked again, and what is found replaces what the account held). A provider is not called when
none of the fields it can give are missing, when the account has no key for it, when its month's
requests are used up, or when the query is not enough for it (Apollo needs a domain): each is an
attempt with its reason. Answers are cached per account and provider (misses too); ``refresh`` asks again; a dry run
plans and calls nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import httpx

from vpx.contacts.identifiers import registrable_domain
from vpx.db import Database
from vpx.enrichment import store
from vpx.enrichment.calls import Outcome, ProviderCalls
from vpx.enrichment.providers.base import (
    DECISION_MAKER_PREFIX,
    BusinessQuery,
    Found,
    FoundValue,
    PersonQuery,
    Provider,
)


@dataclass
class Person:
    """A decision-maker (D31) as the waterfall sees them."""

    key: str  # their matching name: what their enriched values are kept under
    name: str
    title: str | None
    missing: set[str]


@dataclass
class Job:
    """One contact's enrichment for one account: what is known, what is missing, what to ask."""

    account_id: str
    contact_id: int
    business: BusinessQuery
    missing: set[str]  # business fields
    people: list[Person]
    keys: dict[str, tuple[str, int | None]]  # provider -> (api key, monthly limit)
    order: list[str]
    refresh: bool = False
    dry_run: bool = False
    found: list[store.HeldValue] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)
    # Providers' answers to keep in the cache: written by the caller with the values, in one
    # transaction per contact rather than one per call (a lost answer costs a call, nothing more).
    answers: list[store.Answer] = field(default_factory=list)


@dataclass
class _Call:
    person: Person | None
    query: BusinessQuery | PersonQuery
    canonical: str
    wanted: set[str]


class Waterfall:
    """Runs jobs against the providers: one per process."""

    def __init__(
        self,
        database: Database,
        *,
        providers: dict[str, Provider],
        base_urls: dict[str, str],
        http: httpx.AsyncClient,
        calls: ProviderCalls,
        cache_ttl: timedelta,
        miss_ttl: timedelta,
    ) -> None:
        self.database = database
        self.providers = providers
        self.base_urls = base_urls
        self.http = http
        self.calls = calls
        self.cache_ttl = cache_ttl
        self.miss_ttl = miss_ttl

    async def run(self, job: Job, *, now: datetime) -> Job:
        cache: dict[tuple[str, str], store.CachedAnswer] = {}
        if not job.refresh:
            wanted = [
                (name, store.request_key(name, c.canonical))
                for name in job.order
                for c in self._calls(job, self.providers[name])
            ]
            async with self.database.read_sessions() as session:
                cache = await store.cached(session, account_id=job.account_id, keys=wanted, now=now)
        for name in job.order:
            await self._provider(job, name, cache, now)
        return job

    def _calls(self, job: Job, provider: Provider) -> list[_Call]:
        calls: list[_Call] = []
        wanted = job.missing & provider.business_fields
        if wanted:
            canonical = provider.business_request(job.business)
            if canonical is not None:
                calls.append(_Call(None, job.business, canonical, wanted))
        for person in job.people:
            wanted = person.missing & provider.person_fields
            if not wanted:
                continue
            query = _person_query(person, job.business)
            canonical = provider.person_request(query)
            if canonical is not None:
                calls.append(_Call(person, query, canonical, wanted))
        return calls

    async def _provider(
        self, job: Job, name: str, cache: dict[tuple[str, str], store.CachedAnswer], now: datetime
    ) -> None:
        provider = self.providers[name]
        asked = sorted(job.missing & provider.business_fields) + sorted(
            {DECISION_MAKER_PREFIX + f for p in job.people for f in p.missing & provider.person_fields}
        )
        attempt: dict[str, Any] = {
            "provider": name,
            "status": "skipped",
            "fields": asked,
            "found": [],
            "duration_ms": 0,
        }
        job.attempts.append(attempt)
        if not asked:
            attempt["reason"] = "nothing_missing"
            return
        if name not in job.keys:
            attempt["reason"] = "no_key"
            return
        calls = self._calls(job, provider)
        if not calls:
            attempt["reason"] = "insufficient_query"  # e.g. a domain is needed and none may be sent
            return
        if job.dry_run:
            attempt["status"] = "planned"
            return
        api_key, limit = job.keys[name]
        results: list[str] = []
        errors: list[Outcome] = []
        seconds = 0.0
        for call in calls:
            key = store.request_key(name, call.canonical)
            if (name, key) not in cache and not job.refresh:
                # A query changed by an earlier provider's answer (a domain found): look it up now.
                async with self.database.read_sessions() as session:
                    cache.update(await store.cached(session, account_id=job.account_id, keys=[(name, key)], now=now))
            hit = cache.get((name, key))
            if hit is not None:
                found = _from_cache(hit)
                results.append("cached")
                fetched_at = hit.fetched_at
            else:
                outcome = await self._send(job, provider, call, api_key, limit, now)
                seconds += outcome.seconds
                if outcome.status != "answered":
                    errors.append(outcome)
                    if outcome.status == "monthly_limit_reached":
                        break
                    continue
                found = outcome.found
                results.append("found" if found is not None else "not_found")
                fetched_at = now
                answer = store.Answer(
                    provider=name,
                    key=key,
                    found=found is not None,
                    answer=_to_cache(found),
                    ttl=self.cache_ttl if found is not None else self.miss_ttl,
                )
                job.answers.append(answer)
                cache[(name, key)] = store.CachedAnswer(answer.found, answer.answer, now)
            if found is not None:
                attempt["found"] += self._take(job, name, call, found, fetched_at)
        attempt["duration_ms"] = round(seconds * 1000, 1)
        attempt["status"] = _status(attempt["found"], results, errors)
        if attempt["status"] == "skipped":
            attempt["reason"] = "monthly_limit_reached"
        elif attempt["status"] in ("error", "rate_limited"):
            first = next(e for e in errors if e.status in ("error", "rate_limited"))
            attempt["error"] = {"code": first.code, "message": first.message}

    async def _send(
        self, job: Job, provider: Provider, call: _Call, api_key: str, limit: int | None, now: datetime
    ) -> Outcome:
        base_url = self.base_urls.get(provider.name, provider.default_base_url)
        query = call.query

        async def send() -> Found | None:
            if isinstance(query, PersonQuery):
                return await provider.find_person(self.http, base_url, api_key, query)
            return await provider.find_business(self.http, base_url, api_key, query)

        async def reserve() -> bool:
            async with self.database.write_sessions() as session, session.begin():
                return await store.reserve_request(
                    session, account_id=job.account_id, provider=provider.name, limit=limit, now=now
                )

        return await self.calls.call(
            provider=provider.name, base_url=base_url, api_key=api_key, send=send, reserve=reserve
        )

    def _take(self, job: Job, name: str, call: _Call, found: Found, fetched_at: datetime) -> list[str]:
        """The values of an answer that fill missing fields (first found wins); returns their names."""
        taken: list[str] = []
        missing = job.missing if call.person is None else call.person.missing
        for field_name in sorted(call.wanted & missing & set(found.values)):
            value = found.values[field_name]
            text = str(value.value).strip()
            if not text:
                continue
            missing.discard(field_name)
            job.found.append(
                store.HeldValue(
                    person_key=call.person.key if call.person else "",
                    person_name=call.person.name if call.person else None,
                    field=field_name,
                    value=text,
                    provider=name,
                    provider_record_id=found.record_id,
                    confidence=value.confidence,
                    fetched_at=fetched_at,
                )
            )
            taken.append(field_name if call.person is None else DECISION_MAKER_PREFIX + field_name)
            if call.person is None and field_name == "website" and job.business.domain is None:
                # Later providers may look the business up by the domain just found.
                job.business = _with_domain(job.business, registrable_domain(text))
        return taken


def _status(found: list[str], results: list[str], errors: list[Outcome]) -> str:
    if found:
        return "cached" if results and all(r == "cached" for r in results) else "found"
    if results and not errors:
        return "cached" if all(r == "cached" for r in results) else "not_found"
    if errors and all(e.status == "monthly_limit_reached" for e in errors) and not results:
        return "skipped"
    if any(e.status == "error" for e in errors):
        return "error"
    if any(e.status == "rate_limited" for e in errors):
        return "rate_limited"
    return "not_found"


def _person_query(person: Person, business: BusinessQuery) -> PersonQuery:
    parts = person.name.replace(",", " ").split()
    first, last = (parts[0], parts[-1]) if len(parts) > 1 else (person.name, "")
    return PersonQuery(full_name=person.name, first_name=first, last_name=last, business=business)


def _with_domain(query: BusinessQuery, domain: str | None) -> BusinessQuery:
    return BusinessQuery(name=query.name, city=query.city, state=query.state, domain=domain, phone=query.phone)


def _to_cache(found: Found | None) -> dict[str, Any]:
    if found is None:
        return {}
    return {
        "values": {name: [value.value, value.confidence] for name, value in found.values.items()},
        "record_id": found.record_id,
    }


def _from_cache(hit: store.CachedAnswer) -> Found | None:
    if not hit.found:
        return None
    values = hit.answer.get("values", {})
    return Found(
        values={name: FoundValue(value, confidence) for name, (value, confidence) in values.items()},
        record_id=hit.answer.get("record_id"),
    )
