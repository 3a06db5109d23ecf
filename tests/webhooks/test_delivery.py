"""D26 against a real local receiver: retries on the (shortened) schedule with one webhook-id,
Retry-After, 410, redirects, slow receivers, exhaustion; D25 signatures as received."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest
from fastapi import FastAPI
from standardwebhooks.webhooks import Webhook

from tests.factories import Factory
from tests.webhooks.receiver import Answer, Receiver
from tests.webhooks.support import attempts, deliver_round, deliveries, payload
from vpx.clock import FixedClock

pytestmark = pytest.mark.asyncio


async def subscribe(client: httpx.AsyncClient, headers: dict[str, str], url: str, events: list[str]) -> dict:  # type: ignore[type-arg]
    response = await client.post("/api/v1/webhooks", json={"url": url, "events": events}, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


async def test_failures_then_success_retry_on_schedule_with_one_webhook_id(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver, clock: FixedClock
) -> None:
    clock.set(datetime.now(UTC))  # the reference library checks timestamps against the real clock
    account = await factory.account()
    hook = await subscribe(client, account.headers("full"), receiver.url(), ["contact.revealed"])
    receiver.script("/hook", Answer(500), Answer(502))
    contact = await factory.contact()
    assert (await client.post(f"/api/v1/contacts/{contact}/reveal", headers=account.headers())).status_code == 200

    assert await deliver_round(app) == 1  # 500
    [delivery] = await deliveries(app)
    assert delivery.status == "pending" and delivery.attempt_count == 1
    assert delivery.next_attempt_at == clock.now() + timedelta(seconds=1)  # schedule[0], no jitter here
    assert await deliver_round(app) == 0  # not yet due
    clock.set(clock.now() + timedelta(seconds=1))
    assert await deliver_round(app) == 1  # 502
    [delivery] = await deliveries(app)
    assert delivery.next_attempt_at == clock.now() + timedelta(seconds=2)
    clock.set(clock.now() + timedelta(seconds=2))
    assert await deliver_round(app) == 1  # 200

    received = receiver.received("/hook")
    assert len(received) == 3
    assert len({r.headers["webhook-id"] for r in received}) == 1
    assert len({r.body for r in received}) == 1
    body = payload(received[0].body)
    assert body["type"] == "contact.revealed"
    assert body["data"]["contact_id"] == contact and body["data"]["contact"]["phone"] == "+13035550100"
    Webhook(hook["secret"]).verify(received[-1].body, received[-1].headers)
    [delivery] = await deliveries(app)
    assert delivery.status == "succeeded" and delivery.attempt_count == 3
    assert [a.status_code for a in await attempts(app)] == [500, 502, 200]


async def test_attempts_exhausted_fail_the_delivery(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver, clock: FixedClock
) -> None:
    account = await factory.account()
    hook = await subscribe(client, account.headers("full"), receiver.url(), ["contact.revealed"])
    receiver.script("/hook", *[Answer(500)] * 4)
    await client.post(f"/api/v1/webhooks/{hook['id']}/test", headers=account.headers("full"))
    for _ in range(4):  # the first attempt and three retries (schedule of three delays)
        clock.set(clock.now() + timedelta(seconds=5))
        assert await deliver_round(app) == 1
    clock.set(clock.now() + timedelta(days=2))
    assert await deliver_round(app) == 0
    [delivery] = await deliveries(app)
    assert delivery.status == "failed" and delivery.attempt_count == 4


@pytest.mark.parametrize("status", [429, 503])
async def test_retry_after_is_honoured(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver, clock: FixedClock, status: int
) -> None:
    account = await factory.account()
    hook = await subscribe(client, account.headers("full"), receiver.url(), ["contact.revealed"])
    receiver.script("/hook", Answer(status, {"Retry-After": "120"}))
    await client.post(f"/api/v1/webhooks/{hook['id']}/test", headers=account.headers("full"))
    await deliver_round(app)
    [delivery] = await deliveries(app)
    assert delivery.status == "pending" and delivery.next_attempt_at == clock.now() + timedelta(seconds=120)


async def test_410_disables_the_endpoint(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver
) -> None:
    account = await factory.account()
    full = account.headers("full")
    hook = await subscribe(client, full, receiver.url(), ["contact.revealed"])
    receiver.script("/hook", Answer(410))
    await client.post(f"/api/v1/webhooks/{hook['id']}/test", headers=full)
    await client.post(f"/api/v1/webhooks/{hook['id']}/test", headers=full)
    assert await deliver_round(app, settings=app.state.settings.model_copy(update={"worker_batch_size": 1})) == 1
    view = (await client.get(f"/api/v1/webhooks/{hook['id']}", headers=full)).json()
    assert view["status"] == "disabled" and "410" in view["disabled_reason"]
    assert [d.status for d in await deliveries(app)] == ["failed", "cancelled"]
    assert len(receiver.received()) == 1
    # Re-enabled by the account, it receives again.
    again = await client.patch(f"/api/v1/webhooks/{hook['id']}", json={"status": "active"}, headers=full)
    assert again.json()["status"] == "active" and again.json()["disabled_reason"] is None
    await client.post(f"/api/v1/webhooks/{hook['id']}/test", headers=full)
    assert await deliver_round(app) == 1
    assert len(receiver.received()) == 2


async def test_a_redirect_is_not_followed(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver
) -> None:
    account = await factory.account()
    hook = await subscribe(client, account.headers("full"), receiver.url(), ["contact.revealed"])
    receiver.script("/hook", Answer(307, {"Location": receiver.url("/elsewhere")}))
    await client.post(f"/api/v1/webhooks/{hook['id']}/test", headers=account.headers("full"))
    await deliver_round(app)
    assert [r.path for r in receiver.received()] == ["/hook"]
    [attempt] = await attempts(app)
    assert attempt.status_code == 307 and attempt.error is not None and attempt.error.startswith("redirect")
    [delivery] = await deliveries(app)
    assert delivery.status == "pending" and delivery.attempt_count == 1


async def test_a_slow_receiver_times_out(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver
) -> None:
    account = await factory.account()
    hook = await subscribe(client, account.headers("full"), receiver.url(), ["contact.revealed"])
    receiver.script("/hook", Answer(200, delay=1.0))
    await client.post(f"/api/v1/webhooks/{hook['id']}/test", headers=account.headers("full"))
    fast = app.state.settings.model_copy(update={"webhook_timeout_seconds": 0.2})
    await deliver_round(app, settings=fast)
    [attempt] = await attempts(app)
    assert attempt.status_code is None and attempt.error is not None and attempt.error.startswith("timeout")
    [delivery] = await deliveries(app)
    assert delivery.status == "pending"


async def test_unreachable_receiver_is_a_failed_attempt(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver
) -> None:
    account = await factory.account()
    receiver.stop()  # nothing listens on its port any more
    hook = await subscribe(client, account.headers("full"), receiver.url(), ["contact.revealed"])
    await client.post(f"/api/v1/webhooks/{hook['id']}/test", headers=account.headers("full"))
    await deliver_round(app)
    [attempt] = await attempts(app)
    assert attempt.status_code is None and attempt.error is not None and attempt.error.startswith("connection_error")
