"""D26 at least once, at scale: 200 events queued, the real `vpx worker` killed with SIGKILL while a
round of deliveries is in flight to a slow receiver, then a new worker started. Every event arrives,
every arrival of one event carries that event's one `webhook-id` (and body), and every delivery ends
`succeeded` in the database."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import httpx
from fastapi import FastAPI

from tests.factories import Factory
from tests.faults.support import VpxProcess, wait_until
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliveries
from vpx.clock import FixedClock
from vpx.webhooks import service as webhook_service

EVENTS = 200
IN_FLIGHT = 50


def start_worker(database_url: str, log: Path) -> VpxProcess:
    return VpxProcess(
        database_url,
        ["worker", "--in-flight", str(IN_FLIGHT)],
        log,
        {
            "webhook_allow_private": "1",
            # A short lease: the second worker takes up the first one's claims a second after the kill.
            "worker_lease_seconds": "1",
            "worker_poll_seconds": "0.1",
            "worker_batch_size": "25",
            "webhook_retry_schedule": "0.2,0.2,0.2",
        },
    )


async def test_worker_killed_mid_round_then_restarted_delivers_every_event_under_one_id(
    app: FastAPI,
    client: httpx.AsyncClient,
    factory: Factory,
    receiver: Receiver,
    clock: FixedClock,
    database_url: str,
    tmp_path: Path,
) -> None:
    clock.set(datetime.now(UTC))  # the worker processes run on the real clock
    receiver.default_delay = 0.2  # a slow receiver: the kill lands with requests in flight
    account = await factory.account(key_types=("full",))
    created = await client.post(
        "/api/v1/webhooks", json={"url": receiver.url(), "events": ["signal.created"]}, headers=account.headers("full")
    )
    assert created.status_code == 201, created.text
    async with app.state.database.write_sessions() as session, session.begin():
        for n in range(EVENTS):
            await webhook_service.enqueue_event(
                session, account_id=account.id, event_type="signal.created", data={"id": f"sg_{n}"}, now=clock.now()
            )

    log = tmp_path / "worker.log"
    first = start_worker(database_url, log)
    try:

        async def some_arrived() -> bool:
            return len(receiver.received()) >= EVENTS // 5

        assert await wait_until(some_arrived, limit=30), first.output()
    finally:
        first.kill()
    arrived_before = {r.headers["webhook-id"] for r in receiver.received()}
    at_kill = await deliveries(app)
    # Claimed, sent, unanswered: the requests the kill cut short.
    cut_short = {d.event_id for d in at_kill if d.status == "pending" and d.leased_until is not None} & arrived_before
    assert cut_short, "the kill landed between rounds, with nothing in flight"
    assert sum(d.status == "succeeded" for d in at_kill) < EVENTS

    second = start_worker(database_url, log)
    try:

        async def all_succeeded() -> bool:
            return all(d.status == "succeeded" for d in await deliveries(app))

        assert await wait_until(all_succeeded, limit=30, every=0.1), second.output()
    finally:
        exit_code = second.stop()
    assert exit_code == 0, second.output()  # SIGTERM: the round in hand finished, a clean exit

    final = await deliveries(app)
    assert len(final) == EVENTS and all(d.attempt_count >= 1 and d.finished_at for d in final)
    event_ids = {d.event_id for d in final}
    ids_per_event: dict[str, set[str]] = defaultdict(set)  # the event's own id (in its data) -> webhook-ids
    bodies: dict[str, set[bytes]] = defaultdict(set)
    arrivals: dict[str, int] = defaultdict(int)
    for request in receiver.received():
        webhook_id = request.headers["webhook-id"]
        ids_per_event[json.loads(request.body)["data"]["id"]].add(webhook_id)
        bodies[webhook_id].add(request.body)
        arrivals[webhook_id] += 1
    assert sorted(ids_per_event) == sorted(f"sg_{n}" for n in range(EVENTS))  # every event arrived
    assert all(len(ids) == 1 for ids in ids_per_event.values()), {
        event: ids for event, ids in ids_per_event.items() if len(ids) > 1
    }  # never twice under different ids
    assert set(arrivals) == event_ids  # each under the id the database holds for it
    assert all(len(sent) == 1 for sent in bodies.values())  # a repeat is the same message
    assert all(arrivals[event_id] >= 2 for event_id in cut_short)  # what the kill cut short was sent again
