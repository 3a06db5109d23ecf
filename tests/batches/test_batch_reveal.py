"""D16 batch reveal: bounds, one result per id, exact charges when credits run out part-way, the
webhook mode through the worker, idempotency (D12), and concurrency."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select
from standardwebhooks.webhooks import Webhook

from tests.factories import Factory, details
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliver_round, deliveries, payload
from vpx.batches import service as batch_service
from vpx.clock import FixedClock
from vpx.models import LedgerEntry, Reveal, SuppressionHit

pytestmark = pytest.mark.asyncio
URL = "/api/v1/contacts/batch-reveal"


async def balance(client: httpx.AsyncClient, headers: dict[str, str]) -> float:
    return float((await client.get("/api/v1/account", headers=headers)).json()["balance"]["total"])


@pytest.mark.parametrize(
    "body",
    [
        {"contact_ids": [f"ct_{i}" for i in range(1, 102)]},
        {"contact_ids": []},
        {"contact_ids": "ct_1"},
        {"contact_ids": [1, 2]},
        {"contact_ids": ["ct_" + "1" * 50]},
        {"contact_ids": ["ct_1"], "webhook_url": 5},
        {"contact_ids": ["ct_1"], "colour": "red"},
        {},
    ],
)
async def test_invalid_batches_are_422_and_change_nothing(
    client: httpx.AsyncClient, factory: Factory, body: dict[str, object]
) -> None:
    account = await factory.account()
    response = await client.post(URL, json=body, headers=account.headers())
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "invalid_parameters"
    assert await balance(client, account.headers()) == 25


async def test_101_ids_name_the_field(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    response = await client.post(URL, json={"contact_ids": ["ct_1"] * 101}, headers=account.headers())
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "contact_ids"


async def test_mixed_batch_is_charged_exactly(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()  # 25 free credits
    names = ["Hot One", "Known", "Blocked", "Hot Two", "Hot Three", "Warm One", "Hot Four", "Plain One"]
    ids = {n: await factory.contact(business_name=n, **details(i)) for i, n in enumerate(names)}
    for name in ("Hot One", "Hot Two", "Hot Three", "Hot Four"):
        await factory.set_intent(ids[name], "hot")
    await factory.set_intent(ids["Warm One"], "warm")
    await factory.suppress("contact", ids["Blocked"], reason="fcra")
    assert (await client.post(f"/api/v1/contacts/{ids['Known']}/reveal", headers=account.headers())).status_code == 200

    order = [
        ids["Hot One"],  # 6 -> 18 left
        ids["Known"],  # already revealed: 0
        "ct_999999",  # unknown
        ids["Blocked"],  # suppressed: 0
        ids["Hot One"],  # duplicate: collapsed
        ids["Hot Two"],  # 6 -> 12
        ids["Hot Three"],  # 6 -> 6
        ids["Warm One"],  # 3 -> 3
        ids["Hot Four"],  # 6 > 3: insufficient_credits
        ids["Plain One"],  # 1 -> 2: later, cheaper items still go through
    ]
    response = await client.post(URL, json={"contact_ids": order}, headers=account.headers())
    assert response.status_code == 200, response.text
    body = response.json()
    got = [(r["contact_id"], r["status"], r["credits_charged"]) for r in body["results"]]
    assert got == [
        (ids["Hot One"], "revealed", 6),
        (ids["Known"], "already_revealed", 0),
        ("ct_999999", "not_found", 0),
        (ids["Blocked"], "suppressed", 0),
        (ids["Hot Two"], "revealed", 6),
        (ids["Hot Three"], "revealed", 6),
        (ids["Warm One"], "revealed", 3),
        (ids["Hot Four"], "insufficient_credits", 0),
        (ids["Plain One"], "revealed", 1),
    ]
    with_record = [r["contact"] is not None for r in body["results"]]
    assert with_record == [True, True, False, False, True, True, True, False, True]
    assert body["results"][0]["contact"]["business_name"] == "Hot One"
    assert body["counts"] == {
        "revealed": 5,
        "already_revealed": 1,
        "not_found": 1,
        "suppressed": 1,
        "insufficient_credits": 1,
    }
    assert body["credits_charged"] == 22 and body["credits_remaining"] == 2
    assert response.headers["X-Credits-Charged"] == "22" and response.headers["X-Credits-Remaining"] == "2"
    assert await balance(client, account.headers()) == 2

    async with app.state.database.read_sessions() as session:
        entries = list(
            await session.scalars(
                select(LedgerEntry.amount).where(LedgerEntry.account_id == account.id, LedgerEntry.kind == "reveal")
            )
        )
        assert sorted(entries) == [-6, -6, -6, -3, -1, -1]  # five batch items and the earlier single reveal
        assert await session.scalar(select(func.count()).select_from(SuppressionHit)) == 1
        channels = list(await session.scalars(select(Reveal.channel).where(Reveal.account_id == account.id)))
        assert sorted(channels) == ["batch"] * 5 + ["reveal"]
    preview = (await client.get(f"/api/v1/contacts/{ids['Hot Four']}", headers=account.headers())).json()
    assert preview["preview"] is True

    progress = await client.get(f"{URL}/{body['batch_id']}", headers=account.headers())
    assert progress.status_code == 200
    assert progress.json()["status"] == "completed" and progress.json()["completed"] == 9
    assert [(r["contact_id"], r["status"], r["credits_charged"]) for r in progress.json()["results"]] == got
    other = await factory.account()
    assert (await client.get(f"{URL}/{body['batch_id']}", headers=other.headers())).status_code == 404
    assert (await client.get(f"{URL}/brv_nope", headers=account.headers())).status_code == 404


async def test_idempotent_batch_charges_once(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    contacts = [await factory.contact(business_name=f"Shop {i}", **details(i)) for i in range(3)]
    headers = {**account.headers(), "Idempotency-Key": "batch-1"}
    first = await client.post(URL, json={"contact_ids": contacts}, headers=headers)
    again = await client.post(URL, json={"contact_ids": contacts}, headers=headers)
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json() and again.headers["Idempotent-Replayed"] == "true"
    assert await balance(client, account.headers()) == 22
    other_body = await client.post(URL, json={"contact_ids": contacts[:1]}, headers=headers)
    assert other_body.status_code == 422 and other_body.json()["code"] == "idempotency_mismatch"


async def test_webhook_mode_delivers_each_result_then_completion(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver, clock: FixedClock
) -> None:
    clock.set(datetime.now(UTC))
    account = await factory.account()
    contacts = [await factory.contact(business_name=f"Shop {i}", **details(i)) for i in range(3)]
    await factory.suppress("contact", contacts[1])
    ids = [*contacts, "ct_424242"]
    response = await client.post(
        URL, json={"contact_ids": ids, "webhook_url": receiver.url()}, headers=account.headers()
    )
    assert response.status_code == 202, response.text
    accepted = response.json()
    assert accepted["status"] == "processing" and accepted["total"] == 4
    assert accepted["status_url"] == f"{URL}/{accepted['batch_id']}" == response.headers["location"]
    progress = (await client.get(accepted["status_url"], headers=account.headers())).json()
    assert progress["status"] == "processing" and progress["completed"] == 0
    assert await balance(client, account.headers()) == 25  # nothing charged before the worker runs

    assert await batch_service.run_due_batch(
        app.state.database, settings=app.state.settings, clock=clock, resolver=app.state.webhook_resolver
    )
    assert await deliver_round(app) == 5
    received = receiver.received()
    for request in received:
        Webhook(accepted["webhook_secret"]).verify(request.body, request.headers)
    bodies = [payload(r.body) for r in received]
    assert sorted((b["type"], b["data"].get("contact_id"), b["data"].get("status")) for b in bodies) == sorted(
        [
            ("contact.revealed", contacts[0], "revealed"),
            ("contact.revealed", contacts[1], "suppressed"),
            ("contact.revealed", contacts[2], "revealed"),
            ("contact.revealed", "ct_424242", "not_found"),
            ("batch_reveal.completed", None, None),
        ]
    )
    completed = next(b for b in bodies if b["type"] == "batch_reveal.completed")["data"]
    assert completed["batch_id"] == accepted["batch_id"] and completed["credits_charged"] == 2
    assert completed["counts"] == {"revealed": 2, "suppressed": 1, "not_found": 1}
    revealed = next(b for b in bodies if b["data"].get("contact_id") == contacts[0])["data"]
    assert revealed["contact"]["business_name"] == "Shop 0"
    progress = (await client.get(accepted["status_url"], headers=account.headers())).json()
    assert progress["status"] == "completed" and progress["credits_charged"] == 2
    assert await balance(client, account.headers()) == 23
    # A second worker round finds nothing left to do.
    assert not await batch_service.run_due_batch(
        app.state.database, settings=app.state.settings, clock=clock, resolver=app.state.webhook_resolver
    )


async def test_a_subscriptions_contact_revealed_names_its_batch_whichever_way_it_runs(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver, clock: FixedClock
) -> None:
    """contact.revealed to an account's subscriptions carries the batch's id for every item of a batch:
    answered at once, or by the worker (webhook mode); null outside a batch."""
    clock.set(datetime.now(UTC))
    account = await factory.account()
    created = await client.post(
        "/api/v1/webhooks",
        json={"url": receiver.url("/hook"), "events": ["contact.revealed"]},
        headers=account.headers("full"),
    )
    assert created.status_code == 201, created.text
    contacts = [await factory.contact(business_name=f"Shop {i}", **details(i)) for i in range(3)]
    at_once = await client.post(URL, json={"contact_ids": contacts[:1]}, headers=account.headers())
    queued = await client.post(
        URL, json={"contact_ids": contacts[1:2], "webhook_url": receiver.url()}, headers=account.headers()
    )
    single = await client.post(f"/api/v1/contacts/{contacts[2]}/reveal", headers=account.headers())
    assert (at_once.status_code, queued.status_code, single.status_code) == (200, 202, 200)
    assert await batch_service.run_due_batch(
        app.state.database, settings=app.state.settings, clock=clock, resolver=app.state.webhook_resolver
    )
    subscribed = [payload(d.payload)["data"] for d in await deliveries(app) if d.endpoint_id is not None]
    named = {event["contact_id"]: event["batch_id"] for event in subscribed}
    assert named == {
        contacts[0]: at_once.json()["batch_id"],
        contacts[1]: queued.json()["batch_id"],
        contacts[2]: None,
    }


async def test_concurrent_batches_never_overspend(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, backend: str
) -> None:
    """Twelve overlapping batches of one account at once, with credits for only some: every contact is
    charged once, the balance never goes below zero, and the ledger adds up."""
    account = await factory.account()  # 25 credits
    contacts = [await factory.contact(business_name=f"Store {i}", **details(i)) for i in range(30)]
    for contact in contacts:
        await factory.set_intent(contact, "warm")  # 3 credits each: 8 affordable
    batches = [contacts[i : i + 10] for i in range(0, 30, 5)] * 2
    responses = await asyncio.gather(
        *(client.post(URL, json={"contact_ids": ids}, headers=account.headers()) for ids in batches)
    )
    assert all(r.status_code == 200 for r in responses), [r.text for r in responses if r.status_code != 200]
    charged = sum(r.json()["credits_charged"] for r in responses)
    revealed = [x["contact_id"] for r in responses for x in r.json()["results"] if x["status"] == "revealed"]
    assert len(revealed) == len(set(revealed)) == 8 and charged == 24
    assert await balance(client, account.headers()) == 1
    async with app.state.database.read_sessions() as session:
        total = await session.scalar(select(func.sum(LedgerEntry.amount)).where(LedgerEntry.account_id == account.id))
    assert total == 1


async def test_batch_spends_free_credits_first_like_single_reveals(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account(credits=10)  # 25 free this month + 10 granted
    contacts = [await factory.contact(business_name=f"Hot {i}", **details(i)) for i in range(6)]
    for contact in contacts:
        await factory.set_intent(contact, "hot")
    body = (await client.post(URL, json={"contact_ids": contacts}, headers=account.headers())).json()
    assert [r["status"] for r in body["results"]] == ["revealed"] * 5 + ["insufficient_credits"]
    assert [r["contact"]["credits_remaining"] for r in body["results"][:5]] == [5] * 5  # the balance after the batch
    account_view = (await client.get("/api/v1/account", headers=account.headers())).json()
    assert account_view["balance"] == {"total": 5, "free": 0, "paid": 5}
    async with app.state.database.read_sessions() as session:
        after = list(
            await session.scalars(
                select(LedgerEntry.balance_after)
                .where(LedgerEntry.account_id == account.id, LedgerEntry.kind == "reveal")
                .order_by(LedgerEntry.id)
            )
        )
    assert after == [29, 23, 17, 11, 5]


def _missing_required(document: dict[str, Any], schema: dict[str, Any], value: object, where: str) -> list[str]:
    """The places where ``value`` lacks a property its OpenAPI schema marks required (nullable or not)."""
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    if value is None:
        return []
    missing: list[str] = []
    if isinstance(value, dict):
        missing += [f"{where}.{name}" for name in schema.get("required", []) if name not in value]
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                missing += _missing_required(document, sub, value[name], f"{where}.{name}")
    elif isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            missing += _missing_required(document, schema["items"], item, f"{where}[{i}]")
    for option in schema.get("anyOf", []):
        if option.get("type") != "null":
            missing += _missing_required(document, option, value, where)
    return missing


async def test_the_answer_holds_every_field_the_document_requires_nulls_included(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    # A record without email, website or specialty: its nulls are required fields all the same.
    bare = await factory.contact(business_name="Bare Shop", email=None, website=None, specialty=None)
    response = await client.post(URL, json={"contact_ids": [bare, "ct_999999"]}, headers=account.headers())
    assert response.status_code == 200, response.text
    body = response.json()
    revealed = body["results"][0]["contact"]
    assert revealed["email"] is None and revealed["website"] is None and revealed["specialty"] is None
    assert body["results"][1]["contact"] is None  # present, null: not revealed
    document = app.openapi()
    answer_schema = document["paths"][URL]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert _missing_required(document, answer_schema, body, "answer") == []
