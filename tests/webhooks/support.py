"""Helpers shared by the webhook, batch and publisher tests."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.conftest import test_settings
from tests.webhooks.receiver import Receiver
from vpx.config import Settings
from vpx.models import WebhookAttempt, WebhookDelivery
from vpx.webhooks.sender import WebhookSender
from vpx.worker.deliveries import deliver_due

WORKER = "test-worker"


def webhook_settings(database_url: str, **overrides: Any) -> Settings:
    """Private targets allowed (the receiver is on 127.0.0.1), a short schedule without jitter, no
    in-process worker: tests drive the worker's functions themselves."""
    values: dict[str, Any] = {
        "webhook_allow_private": True,
        "webhook_retry_schedule": [1.0, 2.0, 3.0],
        "webhook_retry_jitter": 0.0,
        "webhook_timeout_seconds": 2.0,
        "worker_in_process": False,
    }
    values.update(overrides)
    return test_settings(database_url, **values)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver().start()
    yield server
    server.stop()


async def deliver_round(app: FastAPI, *, settings: Settings | None = None) -> int:
    """One worker round at the app's clock: claim what is due, attempt it, record the outcomes."""
    sender = WebhookSender()
    try:
        return await deliver_due(
            app.state.database,
            box=app.state.secrets,
            sender=sender,
            settings=settings or app.state.settings,
            clock=app.state.clock,
            resolver=app.state.webhook_resolver,
            worker_id=WORKER,
        )
    finally:
        await sender.close()


async def deliveries(app: FastAPI) -> list[WebhookDelivery]:
    async with app.state.database.read_sessions() as session:
        return list(await session.scalars(select(WebhookDelivery).order_by(WebhookDelivery.id)))


async def attempts(app: FastAPI) -> list[WebhookAttempt]:
    async with app.state.database.read_sessions() as session:
        return list(await session.scalars(select(WebhookAttempt).order_by(WebhookAttempt.id)))


def payload(body: bytes) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(body)
    return parsed
