"""Retries, in process: the network between the client and the real application fails as told.

The faults are injected in a transport in front of the application (the only thing faked: the
network); everything that does answer is the service itself. Waits are recorded in
``meta.retries``, never timed. A real 429 from a live server is in test_live_retries.py.
"""

from __future__ import annotations

import json
import random
import uuid
from decimal import Decimal

import httpx
import pytest
from fastapi import FastAPI
from tests.factories import Factory

import vpx_client
from conftest import asgi
from vpx_client import _policy
from vpx_client._async._pages import by_cursor
from vpx_client.models import LedgerPage

LOSE = "lose the answer"


def problem(status: int, code: str, **headers: str) -> httpx.Response:
    body = {"type": f"urn:vpx:problem:{code}", "title": code, "status": status, "detail": code, "code": code,
            "request_id": "req_fault"}  # fmt: skip
    return httpx.Response(status, json=body, headers={"Content-Type": "application/problem+json", **headers})


class Faults(httpx.AsyncBaseTransport):
    """Plays ``plan`` on the first requests (a status to answer, an exception to raise, or LOSE: let
    the app handle the request, then fail as if the connection dropped before the answer), then
    passes requests to the app."""

    def __init__(self, app: FastAPI, plan: list[object]) -> None:
        self.inner = asgi(app)
        self.plan = list(plan)
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.plan.pop(0) if self.plan else None
        if step is None:
            return await self.inner.handle_async_request(request)
        if step == LOSE:
            answer = await self.inner.handle_async_request(request)
            await answer.aread()
            raise httpx.ReadError("connection reset before the answer arrived")
        if isinstance(step, httpx.Response):
            return step
        if isinstance(step, int):
            return problem(step, "unavailable")
        assert isinstance(step, type) and issubclass(step, Exception)
        raise step("injected")

    def keys(self) -> list[str | None]:
        return [r.headers.get("Idempotency-Key") for r in self.requests]


async def test_a_read_is_retried_on_gateway_errors_and_connection_failures(factory: Factory, connect, app) -> None:
    account = await factory.account()
    faults = Faults(app, [503, 502, httpx.ConnectError, 504])
    client = connect(account.keys["ro"], transport=faults, max_retries=4)

    page = await client.contacts.search("anything")

    assert page.meta.status_code == 200 and page.meta.attempts == 5
    assert [r.reason for r in page.meta.retries] == ["503", "502", "ConnectError", "504"]
    assert len({r.headers["X-Request-Id"] for r in faults.requests}) == 1  # one call, one request id


async def test_a_reveal_whose_answer_was_lost_is_retried_with_its_key_and_charged_once(
    factory: Factory, connect, app
) -> None:
    account = await factory.account()
    contact_id = await factory.contact(phone="+13035550155", business_name=f"Lost {uuid.uuid4().hex[:6]}")
    faults = Faults(app, [LOSE])
    client = connect(account.keys["live"], transport=faults)

    revealed = await client.contacts.reveal(contact_id)

    keys = faults.keys()
    assert len(keys) == 2 and keys[0] is not None and keys[0] == keys[1]
    assert revealed.meta.replayed and revealed.meta.credits_charged == Decimal(1)
    assert [r.reason for r in revealed.meta.retries] == ["ReadError"]
    assert (await client.account.balances()).total == Decimal(24)  # charged once


async def test_a_repeat_while_the_first_is_running_waits_and_tries_again(factory: Factory, connect, app) -> None:
    account = await factory.account()
    contact_id = await factory.contact(phone="+13035550154", business_name=f"Busy {uuid.uuid4().hex[:6]}")
    faults = Faults(app, [problem(409, "idempotency_in_progress")])
    client = connect(account.keys["live"], transport=faults)

    revealed = await client.contacts.reveal(contact_id, idempotency_key="busy-1")

    assert [r.reason for r in revealed.meta.retries] == ["idempotency_in_progress"]
    assert faults.keys() == ["busy-1", "busy-1"]


async def test_a_post_without_idempotency_is_not_sent_twice_after_a_gateway_error(
    factory: Factory, connect, app
) -> None:
    account = await factory.account()
    faults = Faults(app, [503])
    client = connect(account.keys["full"], transport=faults)

    with pytest.raises(vpx_client.ServerError) as failed:
        await client.autobuy.create_rule(industries=["solar"], states=["CO"], min_confidence=0.5)

    assert failed.value.status == 503 and len(faults.requests) == 1
    assert (await client.autobuy.list_rules()).rules == []


async def test_a_429_is_retried_even_for_a_post_without_idempotency(factory: Factory, connect, app) -> None:
    account = await factory.account()
    faults = Faults(app, [problem(429, "rate_limited", **{"Retry-After": "0"})])
    client = connect(account.keys["full"], transport=faults)

    rule = await client.autobuy.create_rule(industries=["solar"], states=["CO"], min_confidence=0.5)

    assert [(r.reason, r.retry_after) for r in rule.meta.retries] == [("429", 0.0)]
    assert [r.id for r in (await client.autobuy.list_rules()).rules] == [rule.id]


async def test_a_spending_call_without_its_key_is_never_retried(factory: Factory, connect, app) -> None:
    account = await factory.account()
    contact_id = await factory.contact(phone="+13035550153", business_name=f"Keyless {uuid.uuid4().hex[:6]}")
    for fault in (503, httpx.ConnectError, problem(429, "rate_limited", **{"Retry-After": "0"})):
        faults = Faults(app, [fault])
        client = connect(account.keys["live"], transport=faults)
        with pytest.raises((vpx_client.ServerError, vpx_client.ConnectionFailed, vpx_client.RateLimited)):
            await client.request("POST", f"/contacts/{contact_id}/reveal", idempotency_key=None)
        assert len(faults.requests) == 1 and faults.keys() == [None]
    # The same call through the typed method carries a key, and is retried.
    faults = Faults(app, [503])
    revealed = await connect(account.keys["live"], transport=faults).contacts.reveal(contact_id)
    assert revealed.meta.attempts == 2 and faults.keys()[0] is not None


async def test_the_last_error_is_raised_when_the_retries_are_spent(factory: Factory, connect, app) -> None:
    account = await factory.account()
    faults = Faults(app, [503, 503, 503])
    client = connect(account.keys["ro"], transport=faults, max_retries=2)

    with pytest.raises(vpx_client.ServerError) as failed:
        await client.account.get()

    assert len(faults.requests) == 3 and len(failed.value.meta.retries) == 2


async def test_a_wait_longer_than_allowed_is_not_waited(factory: Factory, connect, app) -> None:
    account = await factory.account()
    faults = Faults(app, [problem(503, "maintenance", **{"Retry-After": "3600"})])
    client = connect(account.keys["ro"], transport=faults, max_retry_wait=30)

    with pytest.raises(vpx_client.ServerError) as failed:
        await client.account.get()

    assert len(faults.requests) == 1 and failed.value.meta.headers["retry-after"] == "3600"


def test_server_waits_are_honoured_with_a_little_jitter_and_backoff_grows() -> None:
    policy = _policy.RetryPolicy(backoff=0.5, max_backoff=8.0)
    rng = random.Random(7)
    for asked in (1.0, 2.0, 30.0):
        waits = [policy.server_delay(asked, rng) for _ in range(100)]
        assert all(asked <= w <= asked + min(1.0, asked * 0.1) for w in waits)
    for attempt, ceiling in ((1, 0.5), (2, 1.0), (3, 2.0), (6, 8.0), (10, 8.0)):
        waits = [policy.backoff_delay(attempt, rng) for _ in range(100)]
        assert all(ceiling / 2 <= w <= ceiling for w in waits) and len(set(waits)) > 1


def test_the_wait_comes_from_retry_after_else_the_ratelimit_reset() -> None:
    request = httpx.Request("GET", "http://x/api/v1/account")
    after = httpx.Response(429, headers={"Retry-After": "3", "RateLimit": '"default";r=0;t=9'}, request=request)
    reset_only = httpx.Response(429, headers={"RateLimit": '"default";r=0;t=9'}, request=request)
    http_date = httpx.Response(503, headers={"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"}, request=request)
    assert _policy.server_wait(after, now=0) == 3.0
    assert _policy.server_wait(reset_only, now=0) == 9.0
    assert _policy.server_wait(http_date, now=1445412480.0) == 10.0


@pytest.mark.parametrize(
    ("method", "path", "spending", "keyed"),
    [
        ("POST", "/api/v1/contacts/reveal", True, True),
        ("POST", "/api/v1/contacts/ct_1/reveal", True, True),
        ("POST", "/api/v1/contacts/batch-reveal", True, True),
        ("POST", "/api/v1/signals/sg_1/purchase", True, True),
        ("POST", "/api/v1/contacts/contribute", False, True),
        ("POST", "/api/v1/webhooks", False, True),
        ("POST", "/api/v1/keys", False, True),
        ("POST", "/api/v1/contacts/batch-enrich", False, True),
        ("POST", "/api/v1/buyer/auto-buy/rules", False, False),
        ("GET", "/api/v1/contacts/ct_1", False, False),
    ],
)
def test_which_calls_spend_and_which_carry_a_key(method: str, path: str, spending: bool, keyed: bool) -> None:
    assert _policy.is_spending(method, path) is spending
    assert _policy.takes_idempotency_key(method, path) is keyed


async def test_cursor_walks_stop_at_a_repeated_cursor() -> None:
    """A server that hands back a cursor it gave before must not keep the walk going forever."""
    pages = [
        LedgerPage.model_validate(json.loads(s))
        for s in (
            '{"entries": [], "limit": 1, "next_cursor": "a"}',
            '{"entries": [], "limit": 1, "next_cursor": "b"}',
            '{"entries": [], "limit": 1, "next_cursor": "a"}',
            '{"entries": [], "limit": 1, "next_cursor": "c"}',
        )
    ]
    asked: list[str | None] = []

    async def fetch(cursor: str | None) -> LedgerPage:
        asked.append(cursor)
        return pages[len(asked) - 1]

    walked = [e async for e in by_cursor(fetch, lambda p: p.next_cursor, lambda p: p.entries)]

    assert walked == [] and asked == [None, "a", "b"]


async def test_no_answer_after_the_retries_is_connection_failed(factory: Factory, connect, app) -> None:
    account = await factory.account()
    faults = Faults(app, [httpx.ConnectError, httpx.ReadTimeout, httpx.ConnectError])
    client = connect(account.keys["ro"], transport=faults, max_retries=2)

    with pytest.raises(vpx_client.ConnectionFailed) as failed:
        await client.account.get()

    assert failed.value.status is None and len(faults.requests) == 3
    assert [r.reason for r in failed.value.meta.retries] == ["ConnectError", "ReadTimeout"]
