"""The production topology, for real: nginx in front of 3 `vpx serve --no-worker` API processes on one
PostgreSQL database and one Redis, and 2 `vpx worker` processes (bench/cluster.py starts it once for
this module). What must hold however requests spread over processes: credits charged exactly (D10,
D11), an idempotency key honoured by every process (D12), an auto-buy budget never passed (D24),
webhooks never lost when a worker dies (D26), a stream resumed on another process without a gap or a
repeat (D23), one rate limit for all (D7), and X-Forwarded-For believed from the proxy alone (D6).

Runs when PostgreSQL (VPX_BENCH_POSTGRES_URL, by default the tests' server), Redis
(VPX_CLUSTER_REDIS_URL, by default 127.0.0.1:6379) and nginx are there (nginx is installed when
missing and possible); skips saying which is missing otherwise."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal

import httpx
import pytest
from bench.cluster import TEST_SETTINGS, Cluster, ClusterUnavailable, ensure_nginx, services_missing, start_test_cluster
from sqlalchemy import select

from tests.cluster.support import (
    WAIT_S,
    count_ledger_entries,
    evidence,
    ingest_at,
    ledger_and_balance,
    new_account,
    new_contacts,
    streaming,
    wait_until,
)
from tests.webhooks.receiver import Receiver
from vpx.config import Settings
from vpx.db import Database
from vpx.models import AutoBuyPurchase, Reveal, WebhookDelivery

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    if "postgresql" not in os.environ.get("VPX_TEST_BACKENDS", "postgresql"):
        pytest.skip("the cluster runs on PostgreSQL only, and VPX_TEST_BACKENDS leaves it out")
    missing = services_missing()
    if missing:
        pytest.skip(f"the cluster needs PostgreSQL and Redis: {missing}")
    try:
        ensure_nginx()
    except ClusterUnavailable as exc:
        pytest.skip(f"the cluster needs nginx: {exc}")
    started = start_test_cluster()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
async def database(cluster: Cluster) -> AsyncIterator[Database]:
    """The cluster's database, as the test writes its data and reads the outcome."""
    found = Database(Settings(database_url=cluster.database_url), pool=False)
    yield found
    await found.dispose()


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    # Idle connections dropped after 2 s, before the servers' own 5 s keep-alive timeout: at httpx's
    # default (5 s too) a connection the server was closing could be reused, a ReadError (seen once in CI).
    limits = httpx.Limits(max_connections=250, keepalive_expiry=2)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        yield client


def upstreams(responses: list[httpx.Response]) -> set[str]:
    """The API processes (host:port) nginx passed these requests to."""
    return {r.headers["x-vpx-upstream"] for r in responses}


def addresses(cluster: Cluster) -> set[str]:
    return {url.removeprefix("http://") for url in cluster.api_urls}


async def test_x_forwarded_for_is_believed_from_the_proxy_only(
    cluster: Cluster, database: Database, http: httpx.AsyncClient
) -> None:
    """The proxy appends the client's address; a client's own X-Forwarded-For (to the proxy or to an
    API process directly) never puts it inside an allow-list (D6)."""
    here = await new_account(database, key_types=("ro", "live"), ro=["127.0.0.1"], live=["203.0.113.7"])
    spoofed = {"X-Forwarded-For": "203.0.113.7"}
    through_proxy = await http.get(f"{cluster.url}/api/v1/account", headers=here.headers("ro"))
    assert through_proxy.status_code == 200, through_proxy.text
    for url in (cluster.url, cluster.api_urls[0]):
        refused = await http.get(f"{url}/api/v1/account", headers={**here.headers("live"), **spoofed})
        assert refused.status_code == 403 and refused.json()["code"] == "ip_not_allowed", refused.text


async def test_200_concurrent_reveals_across_processes_charge_exactly_a_balance_of_50(
    cluster: Cluster, database: Database, http: httpx.AsyncClient
) -> None:
    buyer = await new_account(database, credits=25)  # + 25 free credits: 50
    contacts = await new_contacts(database, 200, state="CA", city="Fresno", area="559")  # 1 credit each (D9)
    responses = await asyncio.gather(
        *(http.post(f"{cluster.url}/api/v1/contacts/{c}/reveal", headers=buyer.headers()) for c in contacts)
    )
    assert Counter(r.status_code for r in responses) == {200: 50, 402: 150}, Counter(r.text for r in responses)
    assert upstreams(responses) == addresses(cluster)  # every process took part
    assert all(r.json()["code"] == "insufficient_credits" for r in responses if r.status_code == 402)
    assert sum(Decimal(r.headers["X-Credits-Charged"]) for r in responses if r.status_code == 200) == 50
    ledger, balance = await ledger_and_balance(database, buyer.id)
    assert balance == 0 and ledger == balance  # D11: never below zero, the ledger sums to the balance
    assert await count_ledger_entries(database, buyer.id, "reveal") == 50
    async with database.read_sessions() as session:
        revealed = (await session.scalars(select(Reveal.contact_id).where(Reveal.account_id == buyer.id))).all()
    assert len(revealed) == len(set(revealed)) == 50


async def test_one_idempotency_key_sent_20_times_across_processes_charges_once(
    cluster: Cluster, database: Database, http: httpx.AsyncClient
) -> None:
    buyer = await new_account(database)  # 25 free credits
    [contact] = await new_contacts(database, 1, state="NV", city="Reno", area="775")
    headers = {**buyer.headers(), "Idempotency-Key": f"cluster-{uuid.uuid4()}"}
    path = f"/api/v1/contacts/{contact}/reveal"
    responses = await asyncio.gather(*(http.post(cluster.api_urls[n % 3] + path, headers=headers) for n in range(20)))
    # D12: the first is answered, a repeat while it runs is a 409, a repeat after it gets its answer.
    assert {r.status_code for r in responses} <= {200, 409}, [r.text for r in responses]
    assert all(r.json()["code"] == "idempotency_in_progress" for r in responses if r.status_code == 409)
    later = [await http.post(url + path, headers=headers) for url in [*cluster.api_urls, cluster.url]]
    answered = [r for r in [*responses, *later] if r.status_code == 200]
    assert all(r.status_code == 200 for r in later)
    assert len({json.dumps(r.json(), sort_keys=True) for r in answered}) == 1  # one answer, repeated
    assert answered[0].json()["credits_charged"] == 1
    assert await count_ledger_entries(database, buyer.id, "reveal") == 1
    ledger, balance = await ledger_and_balance(database, buyer.id)
    assert balance == 24 and ledger == balance


async def test_auto_buy_budget_is_exact_with_matches_arriving_at_every_process(
    cluster: Cluster, database: Database, http: httpx.AsyncClient
) -> None:
    buyer = await new_account(database, credits=1000, key_types=("full",))
    body = {"name": "Denver plumbers", "industries": ["home-services"], "states": ["CO"], "min_confidence": 0}
    created = await http.post(
        f"{cluster.url}/api/v1/buyer/auto-buy/rules", json={**body, "budget_credits": 30}, headers=buyer.headers("full")
    )
    assert created.status_code == 201, created.text
    contacts = await new_contacts(database, 90, state="CO", city="Denver", area="720")
    # 90 matching cold signals (1 credit each) and 15 more about contacts already named, in batches of
    # five, all at once, every third batch to each API process.
    events = [evidence(c, f"co-{n}") for n, c in enumerate(contacts)]
    events += [evidence(contacts[n * 6], f"co-again-{n}") for n in range(15)]
    batches = [events[i : i + 5] for i in range(0, len(events), 5)]
    reports = await asyncio.gather(
        *(ingest_at(http, cluster.api_urls[n % 3], cluster.admin_token, batch) for n, batch in enumerate(batches))
    )
    assert sum(len(ids) for ids in reports) == 105
    async with database.read_sessions() as session:
        bought = list(await session.scalars(select(AutoBuyPurchase).where(AutoBuyPurchase.account_id == buyer.id)))
    assert len(bought) == len({p.contact_id for p in bought}) == 30  # each contact once (D10)
    assert sum((p.credits_charged for p in bought), Decimal(0)) == 30  # the budget, exactly
    rule_url = f"{cluster.url}/api/v1/buyer/auto-buy/rules/{created.json()['id']}"
    rule = (await http.get(rule_url, headers=buyer.headers("full"))).json()
    assert rule["spent_total"] == 30 and rule["budget_remaining"] == 0 and rule["status"] == "paused", rule
    auto_buy, _ = await ledger_and_balance(database, buyer.id, kind="auto_buy")
    ledger, balance = await ledger_and_balance(database, buyer.id)
    assert auto_buy == -30 and balance == 1025 - 30 and ledger == balance


async def test_every_webhook_event_arrives_under_one_id_while_a_worker_is_killed_mid_delivery(
    cluster: Cluster, database: Database, http: httpx.AsyncClient
) -> None:
    """D26 across processes: events raised by every API process, delivered by 2 workers to a slow
    receiver; one worker is killed with SIGKILL while it has deliveries in flight. Every event arrives,
    always under its one `webhook-id` and body, and every delivery ends `succeeded`."""
    receiver = Receiver().start()
    receiver.default_delay = 0.5  # slow: a worker always has requests in flight
    try:
        owner = await new_account(database, key_types=("full",))
        created = await http.post(
            f"{cluster.url}/api/v1/webhooks",
            json={"url": receiver.url("/cluster"), "events": ["signal.created"], "signal_filter": {"state": "WY"}},
            headers=owner.headers("full"),
        )
        assert created.status_code == 201, created.text
        endpoint = created.json()["id"]
        contacts = await new_contacts(database, 150, state="WY", city="Casper", area="307")
        events = [evidence(c, f"wy-{n}") for n, c in enumerate(contacts)]
        reports = await asyncio.gather(
            *(ingest_at(http, cluster.api_urls[n], cluster.admin_token, events[n::3]) for n in range(3))
        )
        signal_ids = {i for ids in reports for i in ids}
        assert len(signal_ids) == 150

        async def deliveries() -> list[WebhookDelivery]:
            async with database.read_sessions() as session:
                found = await session.scalars(select(WebhookDelivery).where(WebhookDelivery.endpoint_id == endpoint))
                return list(found)

        victim = cluster.worker_ids[0]

        async def victim_has_sent_some_in_flight() -> bool:
            arrived = {r.headers["webhook-id"] for r in receiver.received()}
            return any(d.leased_by == victim and d.event_id in arrived for d in await deliveries())

        assert await wait_until(victim_has_sent_some_in_flight, limit=WAIT_S), cluster.log("worker-0")
        cluster.kill_worker(0)
        arrived_before = {r.headers["webhook-id"] for r in receiver.received()}
        at_kill = await deliveries()
        cut_short = {d.event_id for d in at_kill if d.status == "pending" and d.leased_by == victim} & arrived_before
        assert cut_short, "the kill landed with nothing of the victim's in flight"

        async def all_succeeded() -> bool:
            return all(d.status == "succeeded" for d in await deliveries())

        assert await wait_until(all_succeeded, limit=60, every=0.2), cluster.log("worker-1")
    finally:
        receiver.stop()
        if cluster.workers[0] is None:  # back to two workers for the tests after this one
            cluster.start_worker(0)

    final = await deliveries()
    assert len(final) == 150 and all(d.finished_at for d in final)
    ids_per_signal: dict[str, set[str]] = defaultdict(set)
    bodies: dict[str, set[bytes]] = defaultdict(set)
    arrivals: Counter[str] = Counter()
    for request in receiver.received("/cluster"):
        ids_per_signal[json.loads(request.body)["data"]["id"]].add(request.headers["webhook-id"])
        bodies[request.headers["webhook-id"]].add(request.body)
        arrivals[request.headers["webhook-id"]] += 1
    assert set(ids_per_signal) == signal_ids  # nothing lost
    assert all(len(ids) == 1 for ids in ids_per_signal.values())  # never twice under different ids
    assert set(arrivals) == {d.event_id for d in final}
    assert all(len(sent) == 1 for sent in bodies.values())  # a repeat is the same message
    assert all(arrivals[event_id] >= 2 for event_id in cut_short)  # what the kill cut short went again


async def test_a_stream_resumed_on_another_process_misses_nothing_and_repeats_nothing(
    cluster: Cluster, database: Database, http: httpx.AsyncClient
) -> None:
    """D23: a client reads part of what process 0 streams, drops, misses more, and reconnects to
    process 1 with Last-Event-ID while signals go on arriving through every process; a client of the
    proxy receives everything as it comes (nothing held in nginx's buffers)."""
    listener = await new_account(database, key_types=("full",))
    headers, params = listener.headers("full"), {"state": "VT"}
    contacts = await new_contacts(database, 31, state="VT", city="Burlington", area="802")
    events = [evidence(c, f"vt-{n}") for n, c in enumerate(contacts)]
    token, api = cluster.admin_token, cluster.api_urls
    async with streaming(cluster.url, headers, params) as proxied:
        async with streaming(api[0], headers, params) as first:
            sent = await ingest_at(http, api[1], token, events[:10])
            seen = [await first.next_signal() for _ in range(4)]  # then the client drops, 6 unread
        sent += await ingest_at(http, api[2], token, events[10:20])  # while it is away
        resumed = {**headers, "Last-Event-ID": str(seen[-1]["sequence"])}
        async with streaming(api[1], resumed, params) as second:
            sent += await ingest_at(http, api[0], token, events[20:30])
            sent += await ingest_at(http, api[2], token, events[30:])  # the last one
            seen += await second.signals_until(sent[-1])
        through_proxy = await proxied.signals_until(sent[-1])
    for got in (seen, through_proxy):
        ids = [s["id"] for s in got]
        assert sorted(ids) == sorted(sent) and len(set(ids)) == len(sent)  # everything, once
        assert [s["sequence"] for s in got] == sorted({s["sequence"] for s in got})  # in commit order


async def test_the_rate_limit_is_one_budget_for_every_process(
    cluster: Cluster, database: Database, http: httpx.AsyncClient
) -> None:
    """D7 with VPX_REDIS_URL: a key's requests spread over the 3 processes count against one budget
    (240 an hour here, TEST_SETTINGS): each process saw a third of them, and every one refuses the next."""
    limit = int(TEST_SETTINGS["rate_limit"].split("/")[0])
    caller = await new_account(database, key_types=("ro",))
    path = "/api/v1/account"
    answered = []
    for start in range(0, limit, 30):  # 30 at a time, spread over the processes
        answered += await asyncio.gather(
            *(http.get(cluster.api_urls[n % 3] + path, headers=caller.headers("ro")) for n in range(start, start + 30))
        )
    assert [r.status_code for r in answered] == [200] * limit, Counter(r.text for r in answered if r.status_code != 200)
    assert min(int(r.headers["RateLimit"].split("r=")[1].split(";")[0]) for r in answered) == 0
    for url in [*cluster.api_urls, cluster.url]:
        refused = await http.get(url + path, headers=caller.headers("ro"))
        assert refused.status_code == 429 and refused.json()["code"] == "rate_limited", refused.text
        assert int(refused.headers["Retry-After"]) >= 1
