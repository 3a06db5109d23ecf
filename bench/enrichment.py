"""Enrichment (D32) through local fakes of Hunter, People Data Labs and Apollo answering in 50 ms, on
SQLite (default) or PostgreSQL, a fresh database each run (about 3 minutes either way):

    .venv/bin/python -m bench.enrichment [--database sqlite|postgresql] [--contacts 1000] [--concurrency 16]
        [--serial 30] [--batches 10] [--workers 1] [--cached 250] [--cached-big 60] [--big-cache 100000]

1. 1,000 contacts enriched through the service in-process (vpx.enrichment.service.enrich_contact, what
   POST /contacts/{id}/enrich runs, without the HTTP layer), 16 at a time, every field asked, the three
   providers in the waterfall: wall time, and vpx's own overhead per provider call (goal: p99 <= 2 ms
   beyond the provider's latency). Each contact is unrevealed (its preview only): Hunter finds the
   website and email by name, the domain found is passed on, PDL gives the head count and the
   decision-maker's title, Apollo the phone and LinkedIn pages: six provider calls a contact. Then
   --serial more contacts one at a time: the overhead without queueing, with each part's CPU.
2. Batch enrichment: --batches batches of 100 contacts POSTed to /contacts/batch-enrich (in-process
   ASGI), then vpx.enrichment.batch.run_due_batch in --workers loops (one loop is one `vpx worker`)
   until none is left: contacts/s, provider calls/s, wall time. A fresh account: nothing cached.
3. A cached enrichment over real HTTP (`vpx serve` in a subprocess, one httpx request at a time):
   contacts revealed and enriched for some fields (every provider called, its answers cached), then
   POST /contacts/{id}/enrich for other fields: every provider answers from the cache (checked: each
   attempt's status is "cached", and the fakes receive no request). p50/p95/p99 against the goal
   p99 <= 20 ms, each request followed by GET /healthz (the framework's ceiling on this machine);
   then again once --big-cache more answers are cached for the account (one that has enriched
   ~17,000 contacts holds 100,000).

How the overhead is measured. The fakes (tests/enrichment/fakes.py, with dictionary look-ups) run in
a subprocess of their own, so that they take no GIL from vpx; each answer carries the time the fake's
handler took (the 50 ms sleep included) in a header. In this process the bench wraps, without changing
vpx: the waterfall's ProviderCalls.call (what vpx reports as an attempt's duration_ms: rate limit,
monthly usage reservation, request, answer read by the adapter), the rate limiter's spend, the
adapters' find_* methods, the database's session factories (a transaction timed from session open to
close, commit included, named by the store function run in it) and the HTTP client's event hooks
(request sent to the answer's headers received). A provider call's overhead is

    (ProviderCalls.call - the fake's handling time)
    + the cache look-up made just before it (when an earlier provider's answer changed the query)

and is shown in two parts: vpx's work outside the HTTP exchange, and the HTTP exchange beyond the
fake's handling, which holds loopback TCP and the fake's own HTTP server as well as httpx; the
"bare httpx" line is that floor, a plain httpx client at the same concurrency. The per-contact line is
(enrich_contact's wall time - the fakes' handling of its calls) / its calls: the per-contact work
(loading the contact, the first cache look-up, storing the values and the providers' answers for the
cache, one transaction) spread over the calls. At
--concurrency the timings include waiting for the event loop (its lag is printed) as a server process
would; one at a time they do not, and the CPU column (this process, every thread) is each part's own.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import hashlib
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx

from bench.common import fresh_database, percentile
from vpx.enrichment.batch import CONCURRENCY

DB_NAME = "vpx_bench_enrichment"
FAKE_LATENCY = 0.05
PROVIDERS = ("hunter", "pdl", "apollo")
KEYS = {"hunter": "hunter-test-key", "pdl": "pdl-test-key", "apollo": "apollo-test-key"}
FAKE_HEADER = "x-bench-fake-seconds"
# Part 3: the first enrichment (every provider called, answers cached) and the timed one (every
# provider answers from the cache; only Apollo's answer fills the fields asked).
WARM_FIELDS = ["email", "phone", "employee_count", "decision_maker.email", "decision_maker.title",
               "decision_maker.phone"]  # fmt: skip
CACHED_FIELDS = ["linkedin_url", "decision_maker.linkedin_url"]
AREA_CODES = [212, 312, 415, 512, 617, 713, 303, 206, 404, 305, 214, 602, 503, 615, 702, 919]
FIRST_NAMES = ["Maria", "James", "Linda", "Robert", "Patricia", "Michael", "Jennifer", "David", "Susan", "Carlos",
               "Aisha", "Wei", "Olga", "Tom", "Grace", "Omar", "Nina", "Paul", "Rosa", "Ivan"]  # fmt: skip
LAST_NAMES = ["Lopez", "Chen", "Smith", "Garcia", "Nguyen", "Brown", "Patel", "Kim", "Jones", "Miller", "Davis",
              "Wilson", "Moore", "Taylor", "Clark", "Lewis", "Walker", "Hall", "Young", "King", "Wright", "Scott",
              "Green", "Baker", "Adams", "Nelson", "Hill", "Ramirez", "Campbell", "Mitchell", "Roberts", "Carter",
              "Phillips", "Evans", "Turner", "Torres", "Parker", "Collins", "Edwards", "Stewart", "Flores",
              "Morris", "Murphy", "Cook", "Rogers", "Morgan", "Cooper", "Peterson", "Reed", "Bailey"]  # fmt: skip


# --- The data set: the catalogue's businesses and what each fake knows of them ---


@dataclass(frozen=True)
class Business:
    index: int
    row: dict[str, Any]  # display fields for vpx.contacts.catalogue.contact_row
    domain: str
    first: str
    last: str

    @property
    def person(self) -> str:
        return f"{self.first} {self.last}"


def dataset(count: int) -> list[Business]:
    """``count`` businesses with distinct names (demo data), each with a domain and one owner."""
    from vpx.contacts.normalise import name_key
    from vpx.demo.generator import demo_contacts

    seen: set[str] = set()
    found: list[Business] = []
    for fields in demo_contacts(count * 3, seed=11):
        key = name_key(fields["business_name"])
        if key in seen:
            continue
        seen.add(key)
        n = len(found)
        domain = re.sub(r"[^a-z0-9]+", "-", key).strip("-") + f"-{n}.example"
        # What the catalogue shows once revealed: the website only (email and phone left to enrich).
        row = {**fields, "phone": None, "email": None, "website": f"https://www.{domain}"}
        first, last = FIRST_NAMES[n % len(FIRST_NAMES)], LAST_NAMES[(n // len(FIRST_NAMES)) % len(LAST_NAMES)]
        found.append(Business(n, row, domain, first, last))
        if len(found) == count:
            return found
    raise RuntimeError("not enough distinct demo businesses")


def fake_records(provider: str, businesses: list[Business]) -> tuple[list[Any], list[Any]]:
    """What one fake knows: Hunter the email addresses, PDL head counts and titles, Apollo phones
    and LinkedIn pages, so that each provider of the waterfall has fields left to fill."""
    from tests.enrichment.fakes import FakeCompany, FakePerson

    companies, people = [], []
    for b in businesses:
        name, city, state = b.row["business_name"], b.row["city"], b.row["state"]
        company = FakeCompany(name=name, domain=b.domain, city=city, state=state)
        person = FakePerson(first_name=b.first, last_name=b.last, company_domain=b.domain, company_name=name)
        if provider == "hunter":
            company.email = f"info@{b.domain}"
            person.email = f"{b.first.lower()}@{b.domain}"
        elif provider == "pdl":
            company.employee_count = 3 + b.index % 240
            person.title = "Owner"
        else:
            area = AREA_CODES[b.index % len(AREA_CODES)]
            company.phone = f"({area}) 555-{b.index % 10000:04d}"
            company.linkedin_url = f"https://www.linkedin.com/company/{b.domain.split('.')[0]}"
            person.phone = f"({area}) 555-{(b.index + 5000) % 10000:04d}"
            person.linkedin_url = f"https://www.linkedin.com/in/{b.first.lower()}-{b.last.lower()}-{b.index}"
        companies.append(company)
        people.append(person)
    return companies, people


# --- The fakes, in a subprocess of their own ---


def indexed(base: type) -> type:
    """A fake whose look-ups are dictionary look-ups (the fakes scan their lists: fine for a handful
    of records, milliseconds each for a thousand), answering the same."""
    from tests.enrichment.fakes import _agrees, _bare

    from vpx.contacts.normalise import name_key

    class Indexed(base):  # type: ignore[valid-type,misc]
        def index(self) -> None:
            self.by_domain = {c.domain.lower(): c for c in self.companies if c.domain}
            self.by_name: dict[str, list[Any]] = {}
            for c in self.companies:
                self.by_name.setdefault(name_key(c.name), []).append(c)
            self.by_person: dict[tuple[str, str], list[Any]] = {}
            for p in self.people:
                self.by_person.setdefault((p.first_name.lower(), p.last_name.lower()), []).append(p)

        def company(self, *, domain: str | None = None, name: str | None = None, city: str | None = None,
                    state: str | None = None) -> Any:  # fmt: skip
            if domain and (hit := self.by_domain.get(_bare(domain))) is not None:
                return hit
            for c in self.by_name.get(name_key(name), []) if name else []:
                if _agrees(city, c.city) and _agrees(state, c.state):
                    return c
            return None

        def person(self, params: dict[str, str], *, company_params: tuple[str, ...]) -> Any:
            first, last = params.get("first_name", ""), params.get("last_name", "")
            full = params.get("full_name") or params.get("name")
            if not (first and last) and full and len(full.split()) >= 2:
                first, last = full.split()[0], full.split()[-1]
            companies = [params[key] for key in company_params if params.get(key)]
            for p in self.by_person.get((first.lower(), last.lower()), []):
                for company in companies:
                    if p.company_domain and _bare(company) == p.company_domain.lower():
                        return p
                    if p.company_name and name_key(company) == name_key(p.company_name):
                        return p
            return None

    return Indexed


def serve_fakes(count: int) -> None:
    """The subprocess: the three fakes on free loopback ports, their base URLs printed as one JSON
    line; each answer carries the fake's handling time in FAKE_HEADER."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route
    from tests.enrichment.fakes import FakeApollo, FakeHunter, FakePDL

    businesses = dataset(count)
    servers, urls = [], {}
    for name, base in (("hunter", FakeHunter), ("pdl", FakePDL), ("apollo", FakeApollo)):
        fake = indexed(base)(KEYS[name])
        fake.companies, fake.people = fake_records(name, businesses)
        fake.index()
        fake.latency = FAKE_LATENCY

        def routes(fake: Any) -> list[Route]:
            async def handle(request: Request) -> Response:
                started = time.perf_counter()
                response: Response = await fake.handle(request)
                response.headers[FAKE_HEADER] = f"{time.perf_counter() - started:.6f}"
                return response

            async def latency(request: Request) -> Response:
                fake.latency = float(request.query_params["seconds"])
                return JSONResponse({"latency": fake.latency})

            async def stats(request: Request) -> Response:
                return JSONResponse({"requests": len(fake.requests)})

            return [Route("/__bench/latency", latency, methods=["POST"]), Route("/__bench/stats", stats),
                    Route("/{path:path}", handle, methods=["GET", "POST"])]  # fmt: skip

        # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets whose proto says TCP; without it
        # each answer's body waits ~40 ms for the client's delayed ACK (as start_fakes()' answers do).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        urls[name] = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(Starlette(routes=routes(fake)), log_level="warning", access_log=False,
                                lifespan="off", backlog=1024)  # fmt: skip
        servers.append((uvicorn.Server(config), sock))

    def orphaned() -> None:  # the bench closes our stdin when it ends, however it ends
        sys.stdin.read()
        os._exit(0)

    threading.Thread(target=orphaned, daemon=True).start()

    async def run() -> None:
        tasks = [asyncio.create_task(server.serve(sockets=[sock])) for server, sock in servers]
        for _ in range(1000):  # up to 10 s
            if all(server.started for server, _ in servers):
                break
            await asyncio.sleep(0.01)
        print(json.dumps(urls), flush=True)
        await asyncio.gather(*tasks)

    asyncio.run(run())


class Fakes:
    """The fakes' subprocess, seen from the bench."""

    def __init__(self, count: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.enrichment", "--serve-fakes", str(count)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[1],
        )  # fmt: skip
        line = self.process.stdout.readline() if self.process.stdout else ""
        if not line:
            raise RuntimeError("the fakes did not start")
        self.urls: dict[str, str] = json.loads(line)

    async def set_latency(self, seconds: float) -> None:
        async with httpx.AsyncClient() as client:
            for url in self.urls.values():
                (await client.post(f"{url}/__bench/latency", params={"seconds": seconds})).raise_for_status()

    async def requests(self) -> int:
        async with httpx.AsyncClient() as client:
            return sum([(await client.get(f"{url}/__bench/stats")).json()["requests"] for url in self.urls.values()])

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# --- Timing what the waterfall does, from outside (vpx unchanged) ---


def _now() -> tuple[float, float]:
    """Wall and CPU (this process, every thread: SQLite's too) clocks."""
    return time.perf_counter(), time.process_time()


@dataclass
class CallRecord:
    """One provider call, by component (wall and CPU seconds): ``lookup``, the cache look-up made just
    before it (when an earlier answer changed the query); ``spend``, the key's rate limit;
    ``reserve``, the monthly usage reservation (a write transaction); ``http``, request sent to the
    answer's headers received (httpx's event hooks); ``adapter``, the adapter's find_* (the request,
    and reading the answer); ``call``, ProviderCalls.call (what vpx reports as the attempt's
    duration). The answers are cached with the contact's values, per contact, not per call."""

    provider: str
    wall: Counter[str] = field(default_factory=Counter)
    cpu: Counter[str] = field(default_factory=Counter)
    fake: float = 0.0  # the fake's handling time, the 50 ms included (its header)
    http_started: tuple[float, float] = (0.0, 0.0)

    def add(self, component: str, started: tuple[float, float]) -> None:
        wall, cpu = _now()
        self.wall[component] += wall - started[0]
        self.cpu[component] += cpu - started[1]

    @property
    def overhead(self) -> float:
        return self.wall["call"] - self.fake + self.wall["lookup"]

    @property
    def outside_http(self) -> float:
        return self.overhead - (self.wall["http"] - self.fake)


@dataclass
class ContactTrace:
    calls: list[CallRecord] = field(default_factory=list)
    current: CallRecord | None = None
    pending_lookup: CallRecord | None = None
    tag: str | None = None
    work: CallRecord = field(default_factory=lambda: CallRecord("contact"))  # the per-contact transactions
    wall: float = 0.0
    cpu: float = 0.0


TRACE: contextvars.ContextVar[ContactTrace | None] = contextvars.ContextVar("bench_trace", default=None)


class _TimedSession:
    def __init__(self, inner: Any, kind: str) -> None:
        self.inner, self.kind, self.started = inner, kind, (0.0, 0.0)

    async def __aenter__(self) -> Any:
        trace = TRACE.get()
        if trace is not None:
            trace.tag = None
        self.started = _now()
        return await self.inner.__aenter__()

    async def __aexit__(self, *exc: Any) -> Any:
        try:
            return await self.inner.__aexit__(*exc)
        finally:
            trace = TRACE.get()
            if trace is not None:
                tag = trace.tag or ("contact_reads" if self.kind == "read" else "other_writes")
                if tag == "reserve" and trace.current is not None:
                    trace.current.add("reserve", self.started)
                elif tag == "cache_lookup" and (trace.calls or trace.current):
                    trace.pending_lookup = trace.pending_lookup or CallRecord("lookup")
                    trace.pending_lookup.add("lookup", self.started)
                else:
                    trace.work.add("upfront_cache_lookup" if tag == "cache_lookup" else tag, self.started)


class _TimedSessions:
    """A session factory whose sessions are timed (attributes pass through to the real one)."""

    def __init__(self, inner: Any, kind: str) -> None:
        self.inner, self.kind = inner, kind

    def __call__(self, *args: Any, **kwargs: Any) -> _TimedSession:
        return _TimedSession(self.inner(*args, **kwargs), self.kind)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _tagged(function: Callable[..., Awaitable[Any]], tag: str) -> Callable[..., Awaitable[Any]]:
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        trace = TRACE.get()
        if trace is not None:
            trace.tag = tag
        return await function(*args, **kwargs)

    return wrapper


def _timed_into(function: Callable[..., Awaitable[Any]], component: str) -> Callable[..., Awaitable[Any]]:
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        trace = TRACE.get()
        started = _now()
        try:
            return await function(*args, **kwargs)
        finally:
            if trace is not None and trace.current is not None:
                trace.current.add(component, started)

    return wrapper


class _TimedLimits:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.spend = _timed_into(inner.spend, "spend")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def instrument(app: Any) -> None:
    from vpx.enrichment import store

    waterfall, database = app.state.enrichment, app.state.database
    database.read_sessions = _TimedSessions(database.read_sessions, "read")
    database.write_sessions = _TimedSessions(database.write_sessions, "write")
    store.cached = _tagged(store.cached, "cache_lookup")
    store.reserve_request = _tagged(store.reserve_request, "reserve")
    store.add_values = _tagged(store.add_values, "values_and_cache_write")
    calls = waterfall.calls
    calls.limits = _TimedLimits(calls.limits)
    for provider in waterfall.providers.values():
        provider.find_business = _timed_into(provider.find_business, "adapter")
        provider.find_person = _timed_into(provider.find_person, "adapter")
    call = calls.call

    async def timed_call(**kwargs: Any) -> Any:
        trace = TRACE.get()
        if trace is None:
            return await call(**kwargs)
        record = CallRecord(kwargs["provider"])
        if trace.pending_lookup is not None:
            record.wall.update(trace.pending_lookup.wall)
            record.cpu.update(trace.pending_lookup.cpu)
        trace.pending_lookup, trace.current = None, record
        started = _now()
        try:
            return await call(**kwargs)
        finally:
            record.add("call", started)
            trace.current = None
            trace.calls.append(record)

    calls.call = timed_call

    async def on_request(request: httpx.Request) -> None:
        trace = TRACE.get()
        if trace is not None and trace.current is not None:
            trace.current.http_started = _now()

    async def on_response(response: httpx.Response) -> None:
        trace = TRACE.get()
        if trace is not None and trace.current is not None:
            trace.current.add("http", trace.current.http_started)
            trace.current.fake += float(response.headers.get(FAKE_HEADER, "nan"))

    waterfall.http.event_hooks = {"request": [on_request], "response": [on_response]}


# --- Setting up: the catalogue, accounts, keys ---


async def add_catalogue(app: Any, businesses: list[Business]) -> list[str]:
    from vpx.contacts.catalogue import add_contacts, contact_row
    from vpx.models import DecisionMaker

    now = datetime.now(UTC)
    rows = [contact_row(b.row, origin="demo", now=now) for b in businesses]
    async with app.state.database.write_sessions() as session, session.begin():
        ids = await add_contacts(session, rows, search=app.state.search, now=now)
        session.add_all(
            DecisionMaker(contact_id=i, name=b.person, title=None, role="owner", phone=None, registry_name="bench",
                          record_id=f"bench-{b.index}", created_at=now)
            for i, b in zip(ids, businesses, strict=True)
        )  # fmt: skip
    return [f"ct_{i}" for i in ids]


async def new_account(app: Any, client: httpx.AsyncClient, credits: int = 0) -> tuple[str, dict[str, str]]:
    """An account with a Full Access key and the three providers' keys (waterfall: hunter, pdl, apollo)."""
    from vpx.accounts import service as account_service
    from vpx.auth import service as key_service
    from vpx.auth.keys import KeyType
    from vpx.credits import service as credit_service

    settings, now = app.state.settings, datetime.now(UTC)
    async with app.state.database.write_sessions() as session, session.begin():
        account = await account_service.create_account(
            session, name="bench", email=None, plan="free", now=now, settings=settings
        )
        if credits:
            await credit_service.add_credits(
                session, account_id=account.id, amount=Decimal(credits), kind="grant", reference=None,
                description="bench", now=now, settings=settings,
            )  # fmt: skip
        _, secret = await key_service.create_key(
            session, account_id=account.id, key_type=KeyType.full, name="bench", ip_allowlist=[], now=now,
            settings=settings,
        )  # fmt: skip
    headers = {"X-API-Key": secret}
    for name in PROVIDERS:
        response = await client.put(f"/api/v1/enrichment/keys/{name}", json={"api_key": KEYS[name]}, headers=headers)
        assert response.status_code == 200, response.text
    return account.id, headers


# --- 1. Contacts enriched through the service ---


async def enrich_many(
    app: Any, account_id: str, ids: list[str], concurrency: int, fields: list[str] | None = None
) -> tuple[list[ContactTrace], list[Any], float, float]:
    """Each contact enriched in a task of its own, ``concurrency`` at a time: traces, results, wall
    and CPU seconds."""
    from vpx.enrichment import service

    gate = asyncio.Semaphore(concurrency)

    async def one(public_id: str) -> tuple[ContactTrace, Any]:
        async with gate:
            trace = ContactTrace()
            TRACE.set(trace)
            started = _now()
            result = await service.enrich_contact(
                app.state.database, app.state.enrichment, app.state.secrets, account_id=account_id,
                public_id=public_id, providers=None, fields=fields, refresh=False, dry_run=False,
                now=datetime.now(UTC),
            )  # fmt: skip
            wall, cpu = _now()
            trace.wall, trace.cpu = wall - started[0], cpu - started[1]
            return trace, result

    started, started_cpu = time.perf_counter(), time.process_time()
    done = await asyncio.gather(*(one(i) for i in ids))
    wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    return [t for t, _ in done], [r for _, r in done], wall, cpu


class LoopLag:
    """How late a 5 ms timer fires while the contacts are enriched: time a ready task waits for the
    event loop (a busy loop delays every await, and with it every measured part)."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> LoopLag:
        self.task = asyncio.create_task(self._tick())
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self.task is not None
        self.task.cancel()

    async def _tick(self) -> None:
        while True:
            started = time.perf_counter()
            await asyncio.sleep(0.005)
            self.lags.append(time.perf_counter() - started - 0.005)


def check_full(results: list[Any]) -> None:
    """Every provider found something; every field filled."""
    for result in results:
        statuses = [a.status for a in result.attempts]
        assert statuses == ["found"] * 3, (result.contact_id, [a.model_dump() for a in result.attempts])
        assert len(result.fields) == 5 and len(result.decision_makers[0].fields) == 4, result.model_dump()


async def bare_http(url: str, concurrency: int, per_task: int) -> list[float]:
    """Round trips of a plain httpx client to a fake (PDL's company enrichment), minus its handling."""
    floor: list[float] = []
    async with httpx.AsyncClient(trust_env=False, timeout=10) as client:

        async def task() -> None:
            for _ in range(per_task):
                started = time.perf_counter()
                response = await client.get(
                    f"{url}/v5/company/enrich", params={"name": "Nobody LLC", "website": "nobody.example"},
                    headers={"X-Api-Key": KEYS["pdl"]},
                )  # fmt: skip
                floor.append(time.perf_counter() - started - float(response.headers[FAKE_HEADER]))

        await asyncio.gather(*(task() for _ in range(concurrency)))
    return floor


# --- 2. Batch enrichment through the worker ---


async def batch_run(
    app: Any, client: httpx.AsyncClient, headers: dict[str, str], ids: list[str], workers: int, fakes: Fakes
) -> dict[str, Any]:
    from vpx.clock import Clock
    from vpx.enrichment.batch import run_due_batch

    before = await fakes.requests()
    started, started_cpu = time.perf_counter(), time.process_time()
    urls = []
    for n in range(0, len(ids), 100):
        response = await client.post("/api/v1/contacts/batch-enrich", json={"contact_ids": ids[n : n + 100]},
                                     headers=headers)  # fmt: skip
        assert response.status_code == 202, response.text
        urls.append(response.json()["status_url"])
    posted = time.perf_counter() - started

    async def worker() -> None:
        while await run_due_batch(app.state.database, waterfall=app.state.enrichment, box=app.state.secrets,
                                  clock=Clock()):  # fmt: skip
            pass

    await asyncio.gather(*(worker() for _ in range(workers)))
    wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    calls = await fakes.requests() - before
    statuses: Counter[str] = Counter()
    for url in urls:
        progress = (await client.get(url, headers=headers)).json()
        assert progress["status"] == "completed", progress
        statuses.update(i["status"] for i in progress["items"])
    assert statuses == {"enriched": len(ids)}, statuses
    return {"wall": wall, "posted": posted, "calls": calls, "cpu": cpu, "contacts": len(ids)}


# --- 3. A cached enrichment over HTTP ---


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    vpx = str(Path(sys.executable).with_name("vpx"))
    process = subprocess.Popen(
        [vpx, "serve", "--port", str(port)], env={**os.environ, **env}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            break
        time.sleep(0.2)
    stop(process)
    raise RuntimeError("vpx serve did not start")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)


async def cached_over_http(port: int, headers: dict[str, str], ids: list[str], warmup: int) -> dict[str, list[float]]:
    """Sequential: a cached enrichment, then GET /healthz, contact after contact."""
    timings: dict[str, list[float]] = {"enrich": [], "healthz": []}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as client:
        for n, public_id in enumerate(ids):
            started = time.perf_counter()
            response = await client.post(f"/api/v1/contacts/{public_id}/enrich", json={"fields": CACHED_FIELDS})
            elapsed = time.perf_counter() - started
            assert response.status_code == 200, response.text
            body = response.json()
            assert [a["status"] for a in body["attempts"]] == ["cached"] * 3, body["attempts"]
            assert sorted(body["attempts"][2]["found"]) == ["decision_maker.linkedin_url", "linkedin_url"], body
            started = time.perf_counter()
            health = await client.get("/healthz")
            health_elapsed = time.perf_counter() - started
            assert health.status_code == 200
            if n >= warmup:
                timings["enrich"].append(elapsed)
                timings["healthz"].append(health_elapsed)
    return timings


# --- Reporting ---


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def spread(values: list[float]) -> str:
    return " ".join(f"{ms(percentile(values, q)):>7}" for q in (50, 95, 99)) + f" {ms(max(values)):>8}"


SPREAD_HEAD = f"{'p50':>7} {'p95':>7} {'p99':>7} {'max':>8}"


def report_calls(title: str, traces: list[ContactTrace], floor: list[float], cpu: bool) -> list[CallRecord]:
    """The overhead per call and its parts; with ``cpu`` (one contact at a time, when this process's
    CPU clock counts one call's work only) the mean CPU of each part too."""
    records = [c for t in traces for c in t.calls]
    head = SPREAD_HEAD + (f" {'cpu mean':>9}" if cpu else "")
    print(f"  {title}: {len(records)} provider calls of {len(traces)} contacts, ms {head}")

    def part(name: str, component: str) -> tuple[str, list[float], list[float]]:
        return name, [c.wall[component] for c in records], [c.cpu[component] for c in records]

    def derived(name: str, wall: Callable[[CallRecord], float], cpu: Callable[[CallRecord], float]) -> tuple[
        str, list[float], list[float]
    ]:  # fmt: skip
        return name, [wall(c) for c in records], [cpu(c) for c in records]

    rest = ("call", "spend", "reserve", "adapter")
    rows = [
        derived("overhead per call (vpx)", lambda c: c.overhead,
                lambda c: c.cpu["call"] + c.cpu["lookup"]),
        derived("  outside the HTTP exchange", lambda c: c.outside_http,
                lambda c: c.cpu["call"] + c.cpu["lookup"] - c.cpu["http"]),
        part("    cache look-up before the call", "lookup"),
        part("    rate limit (spend)", "spend"),
        part("    usage reservation (write tx)", "reserve"),
        derived("    adapter, outside the HTTP exchange", lambda c: c.wall["adapter"] - c.wall["http"],
                lambda c: c.cpu["adapter"] - c.cpu["http"]),
        derived("    ProviderCalls' own", lambda c: c.wall[rest[0]] - sum(c.wall[k] for k in rest[1:]),
                lambda c: c.cpu[rest[0]] - sum(c.cpu[k] for k in rest[1:])),
        derived("  HTTP exchange beyond the fake's handling", lambda c: c.wall["http"] - c.fake,
                lambda c: c.cpu["http"]),
        ("  (bare httpx beyond the fake's handling)", floor, []),
        derived("the fake's handling (50 ms sleep incl.)", lambda c: c.fake, lambda c: 0.0),
        part("duration as vpx reports it", "call"),
        ("per contact: (wall - fakes) / calls", [(t.wall - sum(c.fake for c in t.calls)) / len(t.calls)
                                                 for t in traces], [t.cpu / len(t.calls) for t in traces]),
    ]  # fmt: skip
    for name in sorted(traces[0].work.wall):
        rows.append((f"per contact: {name}", [t.work.wall[name] for t in traces], [t.work.cpu[name] for t in traces]))
    for label, wall, used in rows:
        extra = f" {ms(statistics.fmean(used)):>9}" if cpu and used else ""
        print(f"    {label:<44} {spread(wall)}{extra}")
    return records


def settings_env(url: str, secret_keys: str, fakes: Fakes) -> dict[str, str]:
    """The settings of the bench's app and of `vpx serve`, as environment variables."""
    return {
        "VPX_DATABASE_URL": url, "VPX_SECRET_KEYS": secret_keys, "VPX_RATE_LIMIT": "100000000/minute",
        "VPX_ENRICHMENT_RATE_LIMIT": "100000/second", "VPX_WORKER_IN_PROCESS": "false", "VPX_LOG_LEVEL": "WARNING",
        "VPX_HUNTER_BASE_URL": fakes.urls["hunter"], "VPX_PDL_BASE_URL": fakes.urls["pdl"],
        "VPX_APOLLO_BASE_URL": fakes.urls["apollo"],
    }  # fmt: skip


Summary = list[tuple[str, str, str, str]]


def verdict(value: float, goal: float) -> str:
    return "met" if value <= goal else "not met"


async def in_process(args: argparse.Namespace, env: dict[str, str], fakes: Fakes, summary: Summary) -> tuple[
    str, dict[str, str], list[str]
]:  # fmt: skip
    """Parts 1 and 2, and part 3's preparation; returns part 3's account headers and contacts."""
    from vpx.app import create_app
    from vpx.config import Settings

    settings = Settings(**{name.removeprefix("VPX_").lower(): value for name, value in env.items()})
    app = create_app(settings)
    instrument(app)
    total = args.contacts + args.serial
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://bench", timeout=60) as client,
    ):
        ids = await add_catalogue(app, dataset(total))

        # 1. The service, in-process.
        account_id, _ = await new_account(app, client)
        floor = await bare_http(fakes.urls["pdl"], args.concurrency, 20)
        serial_floor = await bare_http(fakes.urls["pdl"], 1, 60)
        async with LoopLag() as lag:
            traces, results, wall, cpu = await enrich_many(app, account_id, ids[: args.contacts], args.concurrency)
        check_full(results)
        calls = sum(len(t.calls) for t in traces)
        ideal = args.contacts / args.concurrency * calls / args.contacts * FAKE_LATENCY
        print(f"\n1. {args.contacts} contacts enriched through the service in-process, {args.concurrency} at a "
              f"time: {wall:.1f} s wall (the fakes' latency alone: {ideal:.1f} s), {args.contacts / wall:.1f} "
              f"contacts/s, {calls} provider calls ({calls / wall:.0f}/s); CPU of this process "
              f"{cpu / calls * 1000:.2f} ms per call ({cpu / wall:.0%} of a core)")  # fmt: skip
        print(f"  event-loop lag (a 5 ms timer's lateness), ms {SPREAD_HEAD}\n    {'':<44} {spread(lag.lags)}")
        records = report_calls(f"{args.concurrency} contacts at a time", traces, floor, cpu=False)
        p99 = percentile([c.overhead for c in records], 99)
        rates = f"{wall:.1f} s, {args.contacts / wall:.1f} contacts/s, {calls / wall:.0f} calls/s"
        summary.append((f"{args.contacts} contacts, {args.concurrency} at a time", rates, "-", "-"))
        summary.append(("  overhead per provider call p99", f"{ms(p99)} ms", "<= 2 ms", verdict(p99, 0.002)))
        if args.serial:
            serial_traces, serial_results, _, _ = await enrich_many(app, account_id, ids[args.contacts :], 1)
            check_full(serial_results)
            serial = report_calls("one contact at a time", serial_traces, serial_floor, cpu=True)
            p99 = percentile([c.overhead for c in serial], 99)
            summary.append((f"{args.serial} contacts one at a time: overhead p99", f"{ms(p99)} ms", "<= 2 ms",
                            verdict(p99, 0.002)))  # fmt: skip

        # 2. Batch enrichment: a fresh account (nothing cached), through the worker's function.
        _, headers = await new_account(app, client)
        batch = await batch_run(app, client, headers, ids[: args.batches * 100], args.workers, fakes)
        rate, call_rate = batch["contacts"] / batch["wall"], batch["calls"] / batch["wall"]
        print(
            f"\n2. batch enrichment: {args.batches} batches of 100 POSTed ({batch['posted'] * 1000:.0f} ms), then "
            f"run_due_batch in {args.workers} worker loop(s), {CONCURRENCY} contacts at a time each: "
            f"{batch['wall']:.1f} s wall, {rate:.1f} contacts/s, {batch['calls']} provider calls "
            f"({call_rate:.0f}/s); CPU of this process {batch['cpu'] / batch['calls'] * 1000:.2f} ms per call"
        )
        summary.append((f"batch-enrich {args.batches}x100, {args.workers} worker loop", f"{batch['wall']:.1f} s, "
                        f"{rate:.1f} contacts/s, {call_rate:.0f} calls/s", "-", "-"))  # fmt: skip

        # 3. Revealed contacts, every provider's answer cached for them by a first enrichment.
        account_id, headers = await new_account(app, client, credits=1_000_000)
        cached_ids = ids[: args.cached_warmup + args.cached + args.cached_big]
        for n in range(0, len(cached_ids), 100):
            response = await client.post("/api/v1/contacts/batch-reveal", json={"contact_ids": cached_ids[n : n + 100]},
                                         headers=headers)  # fmt: skip
            assert response.status_code == 200, response.text
        await fakes.set_latency(0.0)
        _, warm, _, _ = await enrich_many(app, account_id, cached_ids, args.concurrency, fields=WARM_FIELDS)
        await fakes.set_latency(FAKE_LATENCY)
        for result in warm:
            assert [a.status for a in result.attempts] == ["found"] * 3, [a.model_dump() for a in result.attempts]
    return account_id, headers, cached_ids


async def cache_rows(url: str, account_id: str) -> int:
    from sqlalchemy import func, select

    from vpx.config import Settings
    from vpx.db import Database
    from vpx.models import EnrichmentCacheEntry

    database = Database(Settings(database_url=url), pool=False)
    async with database.read_sessions() as session:
        count = await session.scalar(
            select(func.count()).select_from(EnrichmentCacheEntry).where(EnrichmentCacheEntry.account_id == account_id)
        )
    await database.dispose()
    return int(count or 0)


async def fill_cache(url: str, account_id: str, rows: int) -> None:
    """``rows`` more cached answers for the account (other requests than the bench's), as an account
    that has enriched rows / 6 contacts holds."""
    from sqlalchemy import insert, text

    from vpx.config import Settings
    from vpx.db import Database
    from vpx.models import EnrichmentCacheEntry

    database, now = Database(Settings(database_url=url), pool=False), datetime.now(UTC)
    expires = now + timedelta(days=30)
    answer = {"values": {"website": ["https://filler.example", 0.8]}, "record_id": None}
    for start in range(0, rows, 10_000):
        batch = [
            {"account_id": account_id, "provider": PROVIDERS[i % 3], "found": True, "answer": answer,
             "request_key": hashlib.sha256(f"filler{i}".encode()).hexdigest(), "fetched_at": now, "expires_at": expires}
            for i in range(start, min(rows, start + 10_000))
        ]  # fmt: skip
        async with database.write_sessions() as session, session.begin():
            await session.execute(insert(EnrichmentCacheEntry), batch)
    if not database.is_sqlite:  # as autovacuum would (this machine's server runs without it)
        async with database.write_engine.connect() as connection:
            autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
            await autocommit.execute(text("ANALYZE enrichment_cache"))
    await database.dispose()


async def run(args: argparse.Namespace) -> None:
    from cryptography.fernet import Fernet

    backend, begun = args.database, time.monotonic()
    print(f"enrichment bench: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, database {backend}, fakes answering in "
          f"{FAKE_LATENCY * 1000:.0f} ms, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    total = args.contacts + args.serial
    first, second = args.cached_warmup + args.cached, args.cached_warmup + args.cached + args.cached_big
    assert args.batches * 100 <= total and second <= total
    url = await asyncio.to_thread(fresh_database, backend, DB_NAME)
    fakes = await asyncio.to_thread(Fakes, total)
    summary: Summary = []
    try:
        env = settings_env(url, Fernet.generate_key().decode(), fakes)
        account_id, headers, cached_ids = await in_process(args, env, fakes, summary)
        server = await asyncio.to_thread(serve, env, port := free_port())
        try:
            before = await fakes.requests()
            small = await cached_over_http(port, headers, cached_ids[:first], args.cached_warmup)
            held = await cache_rows(url, account_id)
            big: dict[str, list[float]] = {}
            if args.cached_big:
                await fill_cache(url, account_id, args.big_cache)
                big = await cached_over_http(port, headers, cached_ids[first:second], 0)
            assert await fakes.requests() == before, "a provider was called"
        finally:
            await asyncio.to_thread(stop, server)
    finally:
        fakes.stop()
    print(
        f"\n3. cached enrichment over HTTP (vpx serve, 1 process, one request at a time, after "
        f"{args.cached_warmup} warm-up requests): every attempt 'cached', no provider request, ms {SPREAD_HEAD}"
    )
    rows = [(held, small), *([(held + args.big_cache, big)] if big else [])]
    for answers, timings in rows:
        enrich_t, health_t = timings["enrich"], timings["healthz"]
        label = f"POST enrich, account's cache {answers:,} answers"
        print(f"    {label:<44} {spread(enrich_t)}   mean {ms(statistics.fmean(enrich_t))}")
        print(f"    {'  GET /healthz between them (the ceiling)':<44} {spread(health_t)}")
        p99 = percentile(enrich_t, 99)
        summary.append((f"cached enrich over HTTP p99 ({answers:,} cached)", f"{ms(p99)} ms (healthz "
                        f"{ms(percentile(health_t, 99))} ms)", "<= 20 ms", verdict(p99, 0.020)))  # fmt: skip
    print(f"\nsummary, {datetime.now(UTC):%Y-%m-%d}, {backend} (run took {time.monotonic() - begun:.0f} s, load "
          f"average {os.getloadavg()[0]:.1f}):")  # fmt: skip
    for label, value, goal, met in summary:
        print(f"  {label:<44} {value:<38} {goal:<8} {met}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--contacts", type=int, default=1000, help="part 1: contacts enriched at --concurrency")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--serial", type=int, default=30, help="part 1: contacts enriched one at a time after")
    parser.add_argument("--batches", type=int, default=10, help="part 2: batches of 100 contacts")
    parser.add_argument("--workers", type=int, default=1, help="part 2: run_due_batch loops at once")
    parser.add_argument("--cached", type=int, default=250, help="part 3: timed cached enrichments")
    parser.add_argument("--cached-warmup", type=int, default=20)
    parser.add_argument("--cached-big", type=int, default=60, help="part 3: timed after the cache is filled")
    parser.add_argument("--big-cache", type=int, default=100_000, help="part 3: cached answers added")
    parser.add_argument("--serve-fakes", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_fakes:
        serve_fakes(args.serve_fakes)
        return
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
