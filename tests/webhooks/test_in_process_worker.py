"""The embedded default: the worker runs inside the server, started and stopped by the lifespan, and
is woken by the commit of an event (no waiting for a poll)."""

from __future__ import annotations

import pytest
from fastapi import FastAPI

from tests.conftest import asgi_client, wipe
from tests.factories import Factory
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import payload, webhook_settings
from vpx.app import create_app
from vpx.clock import FixedClock

pytestmark = pytest.mark.asyncio


async def test_lifespan_runs_the_worker_and_a_commit_wakes_it(
    database_url: str, clock: FixedClock, receiver: Receiver
) -> None:
    # A poll far longer than the wait below: only the after-commit wake-up (or NOTIFY) can deliver in time.
    settings = webhook_settings(database_url, worker_in_process=True, worker_poll_seconds=30)
    app: FastAPI = create_app(settings, clock=clock)
    await wipe(app.state.database)
    factory = Factory(app, clock)
    account = await factory.account()
    async with app.router.lifespan_context(app), asgi_client(app) as client:
        created = await client.post(
            "/api/v1/webhooks",
            json={"url": receiver.url(), "events": ["contact.revealed"]},
            headers=account.headers("full"),
        )
        assert created.status_code == 201
        contact = await factory.contact()
        await client.post(f"/api/v1/contacts/{contact}/reveal", headers=account.headers())
        [request] = await receiver.wait_for(1, limit=10)
        assert payload(request.body)["data"]["contact_id"] == contact
    await app.state.database.dispose()
