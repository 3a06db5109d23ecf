"""Webhook signing secrets sealed at rest (D25, D29), like provider keys and mailbox passwords: shown
once in the creation, rotation and batch 202 responses (and their idempotent repeats), never in another
response, a log line, the SQLite file or a `pg_dump`; signing opens them; `vpx secrets rotate`
re-seals them."""

from __future__ import annotations

import logging
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from cryptography.fernet import Fernet
from fastapi import FastAPI
from sqlalchemy import select
from standardwebhooks.webhooks import Webhook

from tests.conftest import TEST_SECRET_KEY, asgi_client
from tests.factories import Factory
from tests.test_cli import vpx
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliver_round, webhook_settings
from vpx.app import create_app
from vpx.batches import service as batch_service
from vpx.clock import FixedClock
from vpx.logs import JsonFormatter
from vpx.models import BatchReveal, IdempotencyRecord, WebhookDelivery, WebhookEndpoint
from vpx.secrets import SecretBox, is_sealed
from vpx.webhooks import service as webhook_service

pytestmark = pytest.mark.asyncio


@dataclass(frozen=True)
class Issued:
    """The secrets one account was shown: a webhook's first and rotated secret, a batch's secret."""

    account_id: str
    webhook_id: str
    batch_id: str
    first: str
    rotated: str
    batch: str
    full: dict[str, str]
    live: dict[str, str]

    @property
    def all(self) -> list[str]:
        return [self.first, self.rotated, self.batch]


@pytest.fixture
def logged() -> Iterator[list[str]]:
    """Every line the service logs during the test, at every level, as the JSON formatter writes it."""
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = Collect(logging.DEBUG)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("vpx")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield lines
    logger.removeHandler(handler)
    logger.setLevel(level)


async def issue_secrets(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver, clock: FixedClock
) -> Issued:
    """Creates a webhook (with a repeat), rotates its secret, starts a batch reveal with a webhook_url
    (with a repeat), and has everything delivered; checks every delivery verifies with what was shown."""
    clock.set(datetime.now(UTC))
    account = await factory.account()
    full = account.headers("full")
    create = {"url": receiver.url("/hook"), "events": ["contact.revealed"]}
    created = await client.post("/api/v1/webhooks", json=create, headers={**full, "Idempotency-Key": "hook-1"})
    assert created.status_code == 201, created.text
    repeat = await client.post("/api/v1/webhooks", json=create, headers={**full, "Idempotency-Key": "hook-1"})
    assert repeat.headers["idempotent-replayed"] == "true" and repeat.json() == created.json()
    hook = created.json()
    rotated = await client.post(f"/api/v1/webhooks/{hook['id']}/rotate-secret", json={"grace_hours": 1}, headers=full)
    assert rotated.status_code == 200, rotated.text
    assert set(rotated.json()) == {"id", "secret", "previous_secret_expires_at"}

    batch_body = {"contact_ids": ["ct_424242"], "webhook_url": receiver.url("/batch")}
    batch_headers = {**account.headers(), "Idempotency-Key": "batch-1"}
    accepted = await client.post("/api/v1/contacts/batch-reveal", json=batch_body, headers=batch_headers)
    assert accepted.status_code == 202, accepted.text
    again = await client.post("/api/v1/contacts/batch-reveal", json=batch_body, headers=batch_headers)
    assert again.headers["idempotent-replayed"] == "true" and again.json() == accepted.json()
    assert await batch_service.run_due_batch(
        app.state.database, settings=app.state.settings, clock=clock, resolver=app.state.webhook_resolver
    )
    assert (await client.post(f"/api/v1/webhooks/{hook['id']}/test", headers=full)).status_code == 202
    assert await deliver_round(app) == 3  # the test event; the batch's item and its completion

    issued = Issued(
        account_id=account.id,
        webhook_id=hook["id"],
        batch_id=accepted.json()["batch_id"],
        first=hook["secret"],
        rotated=rotated.json()["secret"],
        batch=accepted.json()["webhook_secret"],
        full=full,
        live=account.headers(),
    )
    assert all(s.startswith("whsec_") for s in issued.all) and len(set(issued.all)) == 3
    [test_event] = receiver.received("/hook")
    Webhook(issued.first).verify(test_event.body, test_event.headers)  # during the rotation both sign
    Webhook(issued.rotated).verify(test_event.body, test_event.headers)
    batch_deliveries = receiver.received("/batch")
    assert len(batch_deliveries) == 2
    for delivered in batch_deliveries:
        Webhook(issued.batch).verify(delivered.body, delivered.headers)
    return issued


def stored_bytes(database_url: str) -> bytes:
    """What the database keeps: the SQLite file and its WAL as they lie on disk; for PostgreSQL, a
    `pg_dump` of the test database."""
    if database_url.startswith("sqlite"):
        path = Path(database_url.split("///", 1)[1])
        files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
        return b"".join(f.read_bytes() for f in files if f.exists())
    pg_dump = shutil.which("pg_dump")
    if pg_dump is None:
        pytest.skip("pg_dump is not installed: what PostgreSQL stores cannot be read back as a dump")
    url = database_url.replace("postgresql+asyncpg://", "postgresql://", 1)
    done = subprocess.run([pg_dump, "--no-owner", url], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout


async def test_no_signing_secret_is_stored_or_shown_again(
    app: FastAPI,
    client: httpx.AsyncClient,
    factory: Factory,
    receiver: Receiver,
    clock: FixedClock,
    database_url: str,
    logged: list[str],
) -> None:
    issued = await issue_secrets(app, client, factory, receiver, clock)
    box: SecretBox = app.state.secrets

    # Stored sealed, and what is stored opens to what was shown.
    async with app.state.database.read_sessions() as session:
        endpoint = await session.get(WebhookEndpoint, issued.webhook_id)
        assert endpoint is not None and endpoint.previous_secret_sealed is not None
        assert box.open(endpoint.secret_sealed) == issued.rotated
        assert box.open(endpoint.previous_secret_sealed) == issued.first
        batch_sealed = await session.scalar(select(BatchReveal.webhook_secret_sealed))
        assert batch_sealed is not None and box.open(batch_sealed) == issued.batch
        one_off = list(
            await session.scalars(select(WebhookDelivery.secret_sealed).where(WebhookDelivery.url.is_not(None)))
        )
        assert len(one_off) == 2 and all(s is not None and box.open(s) == issued.batch for s in one_off)
        kept = list(await session.scalars(select(IdempotencyRecord.response_body)))
        assert len(kept) == 2 and all(body is not None and is_sealed(body) for body in kept)

    # Never shown again: in no other response about the webhook, its deliveries or the batch.
    webhook = f"/api/v1/webhooks/{issued.webhook_id}"
    for url, headers in [
        ("/api/v1/webhooks", issued.full),
        (webhook, issued.full),
        (f"{webhook}/deliveries", issued.full),
        (f"/api/v1/contacts/batch-reveal/{issued.batch_id}", issued.live),
    ]:
        shown = await client.get(url, headers=headers)
        assert shown.status_code == 200, shown.text
        assert "whsec_" not in shown.text and not any(s.removeprefix("whsec_") in shown.text for s in issued.all)
    patched = await client.patch(webhook, json={"description": "CRM"}, headers=issued.full)
    assert patched.status_code == 200 and "whsec_" not in patched.text

    # Not in the database's storage, nor in any log line.
    stored = stored_bytes(database_url)
    assert issued.webhook_id.encode() in stored  # the right database was read
    for secret in issued.all:
        assert secret.encode() not in stored
        assert secret.removeprefix("whsec_").encode() not in stored
        assert not any(secret in line or secret.removeprefix("whsec_") in line for line in logged)


async def test_rotation_reseals_webhook_secrets_and_signing_goes_on_under_the_new_key(
    app: FastAPI,
    client: httpx.AsyncClient,
    factory: Factory,
    receiver: Receiver,
    clock: FixedClock,
    database_url: str,
) -> None:
    issued = await issue_secrets(app, client, factory, receiver, clock)
    new = Fernet.generate_key().decode()
    done = vpx(database_url, "secrets", "rotate", environment={"VPX_SECRET_KEYS": f"{new},{TEST_SECRET_KEY}"})
    resealed = done["resealed"]
    assert resealed["webhook_endpoints.secret_sealed"] == 1
    assert resealed["webhook_endpoints.previous_secret_sealed"] == 1
    assert resealed["webhook_deliveries.secret_sealed"] == 2
    assert resealed["batch_reveals.webhook_secret_sealed"] == 1
    assert resealed["idempotency_records.response_body"] == 2
    # What it reported before is all still there, under the same names.
    for name in (
        "enrichment_keys.key_sealed",
        "enrichment_batches.webhook_secret_sealed",
        "mailboxes.smtp_password_sealed",
    ):
        assert resealed[name] == 0
    assert done["total"] == sum(resealed.values()) == 7 and done["keys"] == 2

    # A service holding only the new key opens everything: it signs, and repeats still answer.
    only_new = create_app(webhook_settings(database_url, secret_keys=new), clock=clock)
    try:
        async with asgi_client(only_new) as fresh:
            create = {"url": receiver.url("/hook"), "events": ["contact.revealed"]}
            repeat = await fresh.post(
                "/api/v1/webhooks", json=create, headers={**issued.full, "Idempotency-Key": "hook-1"}
            )
            assert repeat.headers["idempotent-replayed"] == "true" and repeat.json()["secret"] == issued.first
            assert (
                await fresh.post(f"/api/v1/webhooks/{issued.webhook_id}/test", headers=issued.full)
            ).status_code == 202
        async with only_new.state.database.write_sessions() as session, session.begin():
            sealed = await session.scalar(select(BatchReveal.webhook_secret_sealed))
            assert sealed is not None
            await webhook_service.enqueue_to_url(
                session,
                account_id=issued.account_id,
                url=receiver.url("/batch"),
                secret_sealed=sealed,
                event_type="batch_reveal.completed",
                data={"batch_id": issued.batch_id},
                now=clock.now(),
            )
        assert await deliver_round(only_new) == 2
        test_event = receiver.received("/hook")[-1]
        Webhook(issued.first).verify(test_event.body, test_event.headers)
        Webhook(issued.rotated).verify(test_event.body, test_event.headers)
        one_off = receiver.received("/batch")[-1]
        Webhook(issued.batch).verify(one_off.body, one_off.headers)
    finally:
        await only_new.state.database.dispose()
