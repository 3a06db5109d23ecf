"""Migration 20261126_webhook_secrets on both databases: a database at the previous revision, holding
signing secrets in clear (a subscription mid-rotation, a batch and its one-off delivery, a kept
idempotent response), comes out with every one sealed; deliveries still verify with the original
`whsec_` values; a downgrade opens them back and upgrading again seals them once more."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy.ext.asyncio import create_async_engine
from standardwebhooks.webhooks import Webhook

from tests.webhooks.receiver import Receiver
from tests.webhooks.support import deliver_round, webhook_settings
from vpx.app import create_app
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.db import UtcDateTime
from vpx.migrations import alembic_config, upgrade
from vpx.secrets import SecretBox, is_sealed
from vpx.webhooks.signing import new_secret

pytestmark = pytest.mark.asyncio

PREVIOUS = "20261126_visitors"
# The heads before this migration: the main line, and the branches the webhook and dashboard tables are on.
PREVIOUS_HEADS = [PREVIOUS, "20261122_webhooks", "20261122_dashboard"]
WHEN = UtcDateTime()


def _table(name: str, *columns: tuple[str, sa.types.TypeEngine[Any]]) -> sa.TableClause:
    return sa.table(name, *(sa.column(c, t) for c, t in columns))


async def _execute(url: str, *statements: sa.Executable) -> list[Any]:
    engine = create_async_engine(url)
    try:
        async with engine.begin() as connection:
            return [await connection.execute(s) for s in statements]
    finally:
        await engine.dispose()


async def _rows(url: str, query: str) -> list[tuple[Any, ...]]:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            return [tuple(r) for r in (await connection.execute(sa.text(query))).all()]
    finally:
        await engine.dispose()


async def test_plain_secrets_are_sealed_and_still_sign(empty_database: str, receiver: Receiver) -> None:
    url = empty_database
    settings = webhook_settings(url)
    box = SecretBox.from_keys([settings.secret_keys or ""], origin="test")
    for head in PREVIOUS_HEADS:
        await asyncio.to_thread(upgrade, settings, head)

    now = datetime.now(UTC).replace(microsecond=0)
    current, previous, batch_secret = new_secret(), new_secret(), new_secret()
    kept = json.dumps({"id": "wh_old", "secret": current}, separators=(",", ":"))
    await _execute(
        url,
        _table(
            "accounts",
            ("id", sa.String()),
            ("name", sa.String()),
            ("plan", sa.String()),
            ("free_credits", sa.BigInteger()),
            ("free_period", sa.String()),
            ("paid_credits", sa.BigInteger()),
            ("created_at", WHEN),
        )
        .insert()
        .values(
            id="acc_old", name="Old", plan="free", free_credits=0, free_period="2026-11", paid_credits=0, created_at=now
        ),
        _table(
            "webhook_endpoints",
            ("id", sa.String()),
            ("account_id", sa.String()),
            ("url", sa.String()),
            ("description", sa.String()),
            ("events", sa.JSON()),
            ("signal_filter", sa.JSON()),
            ("secret", sa.String()),
            ("previous_secret", sa.String()),
            ("previous_secret_expires_at", WHEN),
            ("status", sa.String()),
            ("created_at", WHEN),
            ("updated_at", WHEN),
        )
        .insert()
        .values(
            id="wh_old",
            account_id="acc_old",
            url=receiver.url("/hook"),
            description="",
            events=["webhook.test"],
            signal_filter={},
            secret=current,
            previous_secret=previous,
            previous_secret_expires_at=now + timedelta(hours=1),
            status="active",
            created_at=now,
            updated_at=now,
        ),
        _table(
            "batch_reveals",
            ("id", sa.String()),
            ("account_id", sa.String()),
            ("status", sa.String()),
            ("webhook_url", sa.String()),
            ("webhook_secret", sa.String()),
            ("total", sa.Integer()),
            ("created_at", WHEN),
        )
        .insert()
        .values(
            id="brv_old",
            account_id="acc_old",
            status="completed",
            webhook_url=receiver.url("/batch"),
            webhook_secret=batch_secret,
            total=0,
            created_at=now,
        ),
        _table(
            "webhook_deliveries",
            ("event_id", sa.String()),
            ("event_type", sa.String()),
            ("account_id", sa.String()),
            ("endpoint_id", sa.String()),
            ("url", sa.String()),
            ("secret", sa.String()),
            ("batch_id", sa.String()),
            ("payload", sa.Text()),
            ("status", sa.String()),
            ("attempt_count", sa.Integer()),
            ("next_attempt_at", WHEN),
            ("created_at", WHEN),
        )
        .insert()
        .values(
            [
                {
                    "event_id": "evt_endpoint",
                    "event_type": "webhook.test",
                    "account_id": "acc_old",
                    "endpoint_id": "wh_old",
                    "url": None,
                    "secret": None,
                    "batch_id": None,
                    "payload": '{"type":"webhook.test","timestamp":"2026-11-26T00:00:00Z","data":{}}',
                    "status": "pending",
                    "attempt_count": 0,
                    "next_attempt_at": now,
                    "created_at": now,
                },
                {
                    "event_id": "evt_batch",
                    "event_type": "batch_reveal.completed",
                    "account_id": "acc_old",
                    "endpoint_id": None,
                    "url": receiver.url("/batch"),
                    "secret": batch_secret,
                    "batch_id": "brv_old",
                    "payload": '{"type":"batch_reveal.completed","timestamp":"2026-11-26T00:00:00Z","data":{}}',
                    "status": "pending",
                    "attempt_count": 0,
                    "next_attempt_at": now,
                    "created_at": now,
                },
            ]
        ),
        _table(
            "idempotency_records",
            ("account_id", sa.String()),
            ("key", sa.String()),
            ("fingerprint", sa.String()),
            ("state", sa.String()),
            ("response_status", sa.Integer()),
            ("response_body", sa.Text()),
            ("created_at", WHEN),
        )
        .insert()
        .values(
            account_id="acc_old",
            key="hook-1",
            fingerprint="0" * 64,
            state="completed",
            response_status=201,
            response_body=kept,
            created_at=now,
        ),
    )

    if url.startswith("sqlite"):
        await _rows(url, "PRAGMA wal_checkpoint(TRUNCATE)")  # in the file itself, as long-standing rows are
    await asyncio.to_thread(upgrade, settings)

    [(sealed, sealed_previous)] = await _rows(
        url, "SELECT secret_sealed, previous_secret_sealed FROM webhook_endpoints"
    )
    [(sealed_batch,)] = await _rows(url, "SELECT webhook_secret_sealed FROM batch_reveals")
    [(sealed_delivery,)] = await _rows(url, "SELECT secret_sealed FROM webhook_deliveries WHERE url IS NOT NULL")
    [(sealed_body,)] = await _rows(url, "SELECT response_body FROM idempotency_records")
    assert all(is_sealed(v) for v in (sealed, sealed_previous, sealed_batch, sealed_delivery, sealed_body))
    assert box.open(sealed) == current and box.open(sealed_previous) == previous
    assert box.open(sealed_batch) == box.open(sealed_delivery) == batch_secret
    assert box.open(sealed_body) == kept
    if url.startswith("sqlite"):
        # Once the WAL is checkpointed, the file keeps no trace of them (the migration zeroes freed space).
        await _rows(url, "PRAGMA wal_checkpoint(TRUNCATE)")
        path = Path(url.split("///", 1)[1])
        stored = b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))
        assert not any(s.encode() in stored for s in (current, previous, batch_secret))

    # Deliveries queued before the migration go out signed with the secrets the receivers hold.
    app = create_app(settings, clock=FixedClock(datetime.now(UTC)))
    try:
        assert await deliver_round(app) == 2
    finally:
        await app.state.database.dispose()
    [to_endpoint] = receiver.received("/hook")
    Webhook(current).verify(to_endpoint.body, to_endpoint.headers)
    Webhook(previous).verify(to_endpoint.body, to_endpoint.headers)
    [to_batch] = receiver.received("/batch")
    Webhook(batch_secret).verify(to_batch.body, to_batch.headers)

    # A downgrade opens them back; upgrading again seals them once more.
    await asyncio.to_thread(command.downgrade, alembic_config(settings), PREVIOUS)
    assert await _rows(url, "SELECT secret, previous_secret FROM webhook_endpoints") == [(current, previous)]
    assert await _rows(url, "SELECT webhook_secret FROM batch_reveals") == [(batch_secret,)]
    assert await _rows(url, "SELECT response_body FROM idempotency_records") == [(kept,)]
    await asyncio.to_thread(upgrade, settings)
    [(again,)] = await _rows(url, "SELECT secret_sealed FROM webhook_endpoints")
    assert is_sealed(again) and box.open(again) == current


async def test_an_empty_database_migrates_without_keys(tmp_path: Path) -> None:
    """No row to seal, no key needed: no key file is generated into the data directory."""
    data = tmp_path / "var"
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/new.db", data_dir=data)
    await asyncio.to_thread(upgrade, settings)
    assert not data.exists()
