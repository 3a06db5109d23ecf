"""Helpers of the suppression tests: buyers with webhook subscriptions, reveals, the feed, sequences."""

from __future__ import annotations

from typing import Any

import httpx

from tests.factories import Factory, TestAccount
from tests.sequences.smtp_server import SmtpSink
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import payload

NOTE = "Jane Roe called on 2026-11-14, furious: never call her again at home"


async def buyer(
    client: httpx.AsyncClient, factory: Factory, receiver: Receiver, name: str, *, events: list[str] | None = None
) -> TestAccount:
    """An account with credits and a webhook subscription to contact.suppressed at /<name>."""
    account = await factory.account(credits=100, name=name)
    await subscribe(client, account, receiver, name, events=events)
    return account


async def subscribe(
    client: httpx.AsyncClient, account: TestAccount, receiver: Receiver, name: str, *, events: list[str] | None = None
) -> str:
    """A webhook subscription of the account at /<name>; its signing secret."""
    created = await client.post(
        "/api/v1/webhooks",
        json={"url": receiver.url(f"/{name}"), "events": events or ["contact.suppressed"]},
        headers=account.headers("full"),
    )
    assert created.status_code == 201, created.text
    secret: str = created.json()["secret"]
    return secret


async def reveal(client: httpx.AsyncClient, account: TestAccount, contact_id: str) -> None:
    response = await client.post(f"/api/v1/contacts/{contact_id}/reveal", headers=account.headers())
    assert response.status_code == 200, response.text


async def feed(client: httpx.AsyncClient, account: TestAccount, key_type: str = "ro", **params: Any) -> dict[str, Any]:
    response = await client.get("/api/v1/suppressions/feed", params=params, headers=account.headers(key_type))
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


async def walk(client: httpx.AsyncClient, account: TestAccount, limit: int) -> list[str]:
    """Every contact id of the feed, page by page."""
    seen: list[str] = []
    cursor = None
    while True:
        page = await feed(client, account, limit=limit, **({"cursor": cursor} if cursor else {}))
        seen += [item["contact_id"] for item in page["suppressions"]]
        cursor = page["next_cursor"]
        if cursor is None:
            return seen


def events_at(receiver: Receiver, path: str) -> list[dict[str, Any]]:
    return [payload(r.body) for r in receiver.received(path)]


async def mailbox_and_sequence(
    client: httpx.AsyncClient, account: TestAccount, sink: SmtpSink, sender: str = "sam@seller.example"
) -> str:
    """A mailbox of ``sender`` on the SMTP sink and a two-step sequence (the second step two days later)."""
    mailbox = await client.post(
        "/api/v1/mailboxes",
        json={
            "email": sender,
            "from_name": "Sam Seller",
            "smtp_host": sink.host,
            "smtp_port": sink.port,
            "smtp_security": "none",
            "daily_limit": 30,
            "send_interval_seconds": 0,
            "postal_address": "Seller Inc, 1 Main St, Denver CO 80202",
        },
        headers=account.headers("full"),
    )
    assert mailbox.status_code == 201, mailbox.text
    steps = [
        {"type": "email", "subject": "Hello {{ contact.business_name }}", "body": "Hi from Sam."},
        {"type": "email", "wait": {"days": 2}, "subject": "Following up", "body": "Just checking."},
    ]
    created = await client.post(
        "/api/v1/sequences",
        json={"name": "Plumbers", "mailbox_id": mailbox.json()["id"], "steps": steps},
        headers=account.headers("full"),
    )
    assert created.status_code == 201, created.text
    sequence_id: str = created.json()["id"]
    return sequence_id


async def enroll(client: httpx.AsyncClient, account: TestAccount, sequence_id: str, ids: list[str]) -> None:
    response = await client.post(
        f"/api/v1/sequences/{sequence_id}/enrollments", json={"contact_ids": ids}, headers=account.headers("full")
    )
    assert response.status_code == 200, response.text
    assert {r["status"] for r in response.json()["results"]} == {"enrolled"}, response.text


async def enrollment_states(
    client: httpx.AsyncClient, account: TestAccount, sequence_id: str
) -> dict[str, tuple[str, str | None]]:
    """contact id -> (status, stop_reason)."""
    response = await client.get(f"/api/v1/sequences/{sequence_id}/enrollments", headers=account.headers("full"))
    assert response.status_code == 200, response.text
    return {e["contact_id"]: (e["status"], e["stop_reason"]) for e in response.json()["enrollments"]}
