"""D29: subscriptions, the deliveries log, redelivery, test events, secret rotation; the outbox API
other domains use (enqueue_event with signal filters, D19/D22)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from fastapi import FastAPI
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tests.factories import Factory
from tests.webhooks.receiver import Answer, Receiver
from tests.webhooks.support import deliver_round, deliveries, payload
from vpx.clock import FixedClock
from vpx.webhooks import service as webhook_service

pytestmark = pytest.mark.asyncio


async def test_create_list_get_update_delete(client: httpx.AsyncClient, factory: Factory, receiver: Receiver) -> None:
    account = await factory.account()
    full = account.headers("full")
    created = await client.post(
        "/api/v1/webhooks",
        json={
            "url": receiver.url(),
            "events": ["signal.created", "contact.revealed", "signal.created"],
            "signal_filter": {"industry": "dental", "state": "tx", "intent_level": "hot"},
            "description": "CRM",
        },
        headers=full,
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["secret"].startswith("whsec_") and body["id"].startswith("wh_")
    assert created.headers["location"] == f"/api/v1/webhooks/{body['id']}"
    assert body["events"] == ["signal.created", "contact.revealed"]
    assert body["signal_filter"] == {
        "category": None,
        "industry": "dental",
        "intent_level": "hot",
        "state": "TX",
        "source_status": None,
    }
    listed = (await client.get("/api/v1/webhooks", headers=full)).json()["webhooks"]
    assert [w["id"] for w in listed] == [body["id"]] and "secret" not in listed[0]
    got = (await client.get(f"/api/v1/webhooks/{body['id']}", headers=full)).json()
    assert "secret" not in got and got["status"] == "active"

    patched = await client.patch(
        f"/api/v1/webhooks/{body['id']}",
        json={"events": ["batch_reveal.completed"], "signal_filter": None, "description": "new"},
        headers=full,
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["events"] == ["batch_reveal.completed"] and patched.json()["description"] == "new"
    assert patched.json()["signal_filter"]["industry"] is None

    assert (await client.delete(f"/api/v1/webhooks/{body['id']}", headers=full)).status_code == 204
    assert (await client.get(f"/api/v1/webhooks/{body['id']}", headers=full)).status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        {"url": "https://example.com/", "events": []},
        {"url": "https://example.com/", "events": ["contact.deleted"]},
        {"url": "https://example.com/", "events": ["webhook.test"]},
        {"url": "https://example.com/", "events": ["signal.created"], "signal_filter": {"industry": "mining"}},
        {"url": "https://example.com/", "events": ["signal.created"], "signal_filter": {"state": "ZZ"}},
        {"url": "https://example.com/", "events": ["signal.created"], "signal_filter": {"colour": "red"}},
        {"url": "https://example.com/", "events": ["signal.created"], "extra": 1},
        {"url": 5, "events": ["signal.created"]},
        {"events": ["signal.created"]},
    ],
)
async def test_invalid_subscriptions_are_422(client: httpx.AsyncClient, factory: Factory, body: dict) -> None:  # type: ignore[type-arg]
    account = await factory.account()
    response = await client.post("/api/v1/webhooks", json=body, headers=account.headers("full"))
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "invalid_parameters"


async def test_another_accounts_webhook_is_404(client: httpx.AsyncClient, factory: Factory, receiver: Receiver) -> None:
    owner, other = await factory.account(), await factory.account()
    hook = (
        await client.post(
            "/api/v1/webhooks",
            json={"url": receiver.url(), "events": ["signal.created"]},
            headers=owner.headers("full"),
        )
    ).json()
    for method, path in [
        ("GET", f"/api/v1/webhooks/{hook['id']}"),
        ("PATCH", f"/api/v1/webhooks/{hook['id']}"),
        ("DELETE", f"/api/v1/webhooks/{hook['id']}"),
        ("GET", f"/api/v1/webhooks/{hook['id']}/deliveries"),
        ("POST", f"/api/v1/webhooks/{hook['id']}/test"),
        ("POST", f"/api/v1/webhooks/{hook['id']}/rotate-secret"),
        ("POST", f"/api/v1/webhooks/{hook['id']}/deliveries/dlv_1/redeliver"),
    ]:
        kwargs = {"json": {}} if method == "PATCH" else {}
        response = await client.request(method, path, headers=other.headers("full"), **kwargs)
        assert response.status_code == 404, (method, path, response.text)
        assert response.json()["code"] == "not_found"
    assert (await client.get("/api/v1/webhooks", headers=other.headers("full"))).json() == {"webhooks": []}


async def test_deliveries_log_test_event_and_redelivery_keep_the_webhook_id(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver
) -> None:
    account = await factory.account()
    full = account.headers("full")
    hook = (
        await client.post("/api/v1/webhooks", json={"url": receiver.url(), "events": ["signal.created"]}, headers=full)
    ).json()
    receiver.script("/hook", Answer(500))
    queued = await client.post(f"/api/v1/webhooks/{hook['id']}/test", headers=full)
    assert queued.status_code == 202 and queued.json()["event_type"] == "webhook.test"
    await deliver_round(app)
    log = (await client.get(f"/api/v1/webhooks/{hook['id']}/deliveries", headers=full)).json()
    [entry] = log["deliveries"]
    assert entry["status"] == "pending" and entry["attempt_count"] == 1
    assert entry["attempts"][0]["status_code"] == 500 and entry["attempts"][0]["error"] == "http_error: 500"

    again = await client.post(f"/api/v1/webhooks/{hook['id']}/deliveries/{entry['id']}/redeliver", headers=full)
    assert again.status_code == 202, again.text
    assert again.json()["event_id"] == entry["event_id"] and again.json()["redelivery_of"] == entry["id"]
    await deliver_round(app)
    received = receiver.received()
    assert [r.headers["webhook-id"] for r in received] == [entry["event_id"]] * 2
    assert payload(received[-1].body)["data"]["webhook_id"] == hook["id"]
    page = (await client.get(f"/api/v1/webhooks/{hook['id']}/deliveries?limit=1", headers=full)).json()
    assert len(page["deliveries"]) == 1 and page["next_cursor"]
    rest = (
        await client.get(f"/api/v1/webhooks/{hook['id']}/deliveries?cursor={page['next_cursor']}", headers=full)
    ).json()
    assert [d["id"] for d in page["deliveries"] + rest["deliveries"]] == [again.json()["id"], entry["id"]]
    succeeded = (await client.get(f"/api/v1/webhooks/{hook['id']}/deliveries?status=succeeded", headers=full)).json()
    assert [d["id"] for d in succeeded["deliveries"]] == [again.json()["id"]]
    bad = await client.get(f"/api/v1/webhooks/{hook['id']}/deliveries?cursor=nonsense", headers=full)
    assert bad.status_code == 422
    unknown = await client.post(f"/api/v1/webhooks/{hook['id']}/deliveries/dlv_999/redeliver", headers=full)
    assert unknown.status_code == 404


async def test_secret_rotation_signs_with_both_until_the_grace_period_ends(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver, clock: FixedClock
) -> None:
    clock.set(datetime.now(UTC))
    account = await factory.account()
    full = account.headers("full")
    hook = (
        await client.post("/api/v1/webhooks", json={"url": receiver.url(), "events": ["signal.created"]}, headers=full)
    ).json()
    rotated = await client.post(f"/api/v1/webhooks/{hook['id']}/rotate-secret", json={"grace_hours": 1}, headers=full)
    assert rotated.status_code == 200, rotated.text
    new_secret = rotated.json()["secret"]
    assert new_secret != hook["secret"]
    await client.post(f"/api/v1/webhooks/{hook['id']}/test", headers=full)
    await deliver_round(app)
    [during] = receiver.received()
    Webhook(hook["secret"]).verify(during.body, during.headers)
    Webhook(new_secret).verify(during.body, during.headers)

    clock.set(clock.now() + timedelta(hours=1, seconds=1))
    view = (await client.get(f"/api/v1/webhooks/{hook['id']}", headers=full)).json()
    assert view["secret_rotating_until"] is not None
    await client.post(f"/api/v1/webhooks/{hook['id']}/test", headers=full)
    await deliver_round(app)
    after = receiver.received()[-1]
    # The reference library checks timestamps against the real clock; the test clock is an hour ahead.
    after_headers = {**after.headers, "webhook-timestamp": str(int(datetime.now(UTC).timestamp()))}
    assert after.headers["webhook-signature"].count("v1,") == 1
    with pytest.raises(WebhookVerificationError):
        Webhook(hook["secret"]).verify(after.body, after_headers)


async def test_enqueue_event_reaches_matching_subscriptions_only(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver, clock: FixedClock
) -> None:
    account, other = await factory.account(), await factory.account()
    full = account.headers("full")
    subscriptions = {
        "/any": {"events": ["signal.created"]},
        "/dental": {"events": ["signal.created"], "signal_filter": {"industry": "dental", "intent_level": "hot"}},
        "/blocked": {"events": ["signal.created"], "signal_filter": {"source_status": "fcra_blocked"}},
        "/reveals": {"events": ["contact.revealed"]},
    }
    for path, body in subscriptions.items():
        response = await client.post("/api/v1/webhooks", json={"url": receiver.url(path), **body}, headers=full)
        assert response.status_code == 201
    await client.post(
        "/api/v1/webhooks",
        json={"url": receiver.url("/other"), "events": ["signal.created"]},
        headers=other.headers("full"),
    )
    signals = [
        {"id": "sg_1", "industry": "dental", "intent_level": "hot", "source_status": "available", "state": "TX"},
        {"id": "sg_2", "industry": "legal", "intent_level": "hot", "source_status": "available", "state": "TX"},
        {"id": "sg_3", "industry": "dental", "source_status": "fcra_blocked", "state": "TX"},
    ]
    async with app.state.database.write_sessions() as session, session.begin():
        for signal in signals:
            await webhook_service.enqueue_event(
                session, account_id=account.id, event_type="signal.created", data=signal, now=clock.now()
            )
    await deliver_round(app)
    got = {
        path: [payload(r.body)["data"]["id"] for r in receiver.received(path)] for path in [*subscriptions, "/other"]
    }
    assert {k: sorted(v) for k, v in got.items()} == {
        "/any": ["sg_1", "sg_2"],
        "/dental": ["sg_1"],
        "/blocked": ["sg_3"],
        "/reveals": [],
        "/other": [],
    }


async def test_a_rolled_back_event_is_never_delivered(
    app: FastAPI, factory: Factory, receiver: Receiver, clock: FixedClock
) -> None:
    account = await factory.account()
    async with app.state.database.write_sessions() as session, session.begin():
        await webhook_service.create_endpoint(
            session,
            account_id=account.id,
            url=receiver.url(),
            event_types=["signal.created"],
            signal_filter=None,
            description="",
            now=clock.now(),
            settings=app.state.settings,
            resolver=app.state.webhook_resolver,
            box=app.state.secrets,
        )
    async with app.state.database.write_sessions() as session:
        await webhook_service.enqueue_event(
            session, account_id=account.id, event_type="signal.created", data={"id": "sg_1"}, now=clock.now()
        )
        await session.rollback()
    assert await deliveries(app) == []


async def test_webhooks_created_at_once_stay_within_the_cap(
    client: httpx.AsyncClient, factory: Factory, receiver: Receiver, app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A cap holds under concurrency: each creation counts after the others of its account committed.
    monkeypatch.setattr(webhook_service, "MAX_ENDPOINTS_PER_ACCOUNT", 3)
    account = await factory.account()
    body = {"url": receiver.url(), "events": ["signal.created"]}
    answers = await asyncio.gather(
        *(client.post("/api/v1/webhooks", json=body, headers=account.headers("full")) for _ in range(12))
    )
    assert sorted(a.status_code for a in answers) == [201] * 3 + [409] * 9, [a.text for a in answers]
    listed = await client.get("/api/v1/webhooks", headers=account.headers("full"))
    assert len(listed.json()["webhooks"]) == 3
