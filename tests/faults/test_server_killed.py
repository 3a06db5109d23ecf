"""D16 with D10/D11 across a crash: a real `vpx serve` (worker in process) killed with SIGKILL while
it reveals a 100-item batch, then started again. The batch finishes, every contact is charged at most
once, the account's ledger adds up to its balance, and every item's result reaches the webhook."""

from __future__ import annotations

import json
import signal
from collections import Counter
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.factories import Factory
from tests.faults.support import VpxServer, wait_until
from tests.webhooks.receiver import Receiver
from vpx.clock import FixedClock
from vpx.credits import service as credit_service
from vpx.models import BatchRevealItem, LedgerEntry, Reveal

URL = "/api/v1/contacts/batch-reveal"
ITEMS = 100
GRANT = 200  # plus the free plan's 25: enough for every item (75 at 1 credit, 25 at 3)
SERVER_SETTINGS = {
    "worker_in_process": "true",
    "webhook_allow_private": "1",
    "webhook_retry_schedule": "0.2,0.2,0.2",
    # The restarted server's worker takes up the dead one's batch a second after its last item.
    "worker_lease_seconds": "1",
    "worker_poll_seconds": "0.1",
}


def catalogue() -> list[dict[str, Any]]:
    return [
        {
            "business_name": f"Faultline Hardware {n}",
            "phone": f"+1303555{7000 + n}",
            "city": "Denver",
            "state": "CO",
            "industry": "home-services",
            "email": f"owner{n}@faultline-hardware.example",
            "website": f"https://store{n}.faultline-hardware.example",
            "street": f"{n} Market St",
            "postal_code": "80202",
        }
        for n in range(ITEMS)
    ]


async def done_items(app: FastAPI, batch_id: str) -> int:
    async with app.state.database.read_sessions() as session:
        done = await session.scalar(
            select(func.count())
            .select_from(BatchRevealItem)
            .where(BatchRevealItem.batch_id == batch_id, BatchRevealItem.status != "pending")
        )
    return int(done or 0)


async def test_server_killed_mid_batch_then_restarted_finishes_it_charging_each_contact_once(
    app: FastAPI, factory: Factory, receiver: Receiver, clock: FixedClock, database_url: str, tmp_path: Path
) -> None:
    clock.set(datetime.now(UTC))  # the server runs on the real clock (the free plan's month included)
    account = await factory.account(credits=GRANT, key_types=("live",))
    contacts = await factory.contacts(catalogue())
    for contact_id in contacts[::4]:
        await factory.set_intent(contact_id, "warm")  # 3 credits each (D9)
    log = tmp_path / "server.log"

    first = VpxServer(database_url, log, SERVER_SETTINGS)
    try:
        async with httpx.AsyncClient(base_url=first.url, headers=account.headers(), timeout=10) as http:
            accepted = await http.post(URL, json={"contact_ids": contacts, "webhook_url": receiver.url()})
        assert accepted.status_code == 202, accepted.text
        batch_id = accepted.json()["batch_id"]

        async def started() -> bool:
            return await done_items(app, batch_id) > 0

        assert await wait_until(started, limit=30, every=0.01), first.output()
    finally:
        first.kill()
    done_at_kill = await done_items(app, batch_id)
    assert 0 < done_at_kill < ITEMS, f"the kill did not land mid-batch ({done_at_kill} of {ITEMS} done)"

    second = VpxServer(database_url, log, SERVER_SETTINGS)
    try:
        async with httpx.AsyncClient(base_url=second.url, headers=account.headers(), timeout=10) as http:
            progress: dict[str, Any] = {}

            async def completed() -> bool:
                nonlocal progress
                progress = (await http.get(f"{URL}/{batch_id}")).json()
                return bool(progress["status"] == "completed")

            assert await wait_until(completed, limit=30, every=0.1), (progress, second.output())
            balance_seen = (await http.get("/api/v1/account")).json()["balance"]["total"]

            async def results_delivered() -> bool:
                bodies = [json.loads(r.body) for r in receiver.received()]
                revealed = {b["data"]["contact_id"] for b in bodies if b["type"] == "contact.revealed"}
                return revealed == set(contacts) and any(b["type"] == "batch_reveal.completed" for b in bodies)

            assert await wait_until(results_delivered, limit=30, every=0.1), second.output()
    finally:
        exit_code = second.stop()
    # uvicorn re-raises the SIGTERM it handled once it has shut down cleanly.
    assert exit_code in (0, -signal.SIGTERM), second.output()

    assert progress["completed"] == progress["total"] == ITEMS
    assert [r["contact_id"] for r in progress["results"]] == contacts
    assert {r["status"] for r in progress["results"]} == {"revealed"}
    charged_per_item = {r["contact_id"]: Decimal(str(r["credits_charged"])) for r in progress["results"]}
    assert sum(charged_per_item.values()) == Decimal(75 + 25 * 3)

    async with app.state.database.read_sessions() as session:
        balance = await credit_service.get_balance(session, account_id=account.id)
        ledger = list(
            await session.scalars(
                select(LedgerEntry).where(LedgerEntry.account_id == account.id).order_by(LedgerEntry.id)
            )
        )
        reveals = list(await session.scalars(select(Reveal).where(Reveal.account_id == account.id)))
    assert Decimal(str(balance_seen)) == balance.total == 25 + GRANT - 150
    assert sum(entry.amount for entry in ledger) == balance.total  # D11: the ledger adds up to the balance
    running = Decimal(0)
    for entry in ledger:  # and each entry's balance_after is the sum of the entries up to it
        running += entry.amount
        assert entry.balance_after == running, (entry.id, entry.kind, entry.balance_after, running)
    charges = [entry for entry in ledger if entry.kind == "reveal"]
    per_contact = Counter(entry.reference for entry in charges)
    assert per_contact == Counter(contacts), {c: n for c, n in per_contact.items() if n != 1}  # each charged once
    assert {entry.reference: -entry.amount for entry in charges} == charged_per_item
    assert sorted(f"ct_{r.contact_id}" for r in reveals) == sorted(contacts)
    assert {f"ct_{r.contact_id}": r.credits_charged for r in reveals} == charged_per_item
