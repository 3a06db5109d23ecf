"""The issue's end-to-end check, on both databases: a permit added to a city's Socrata dataset (the fake
SODA endpoint on loopback) reaches a buyer's webhook (a real HTTP receiver, subscribed to
signal.created with a filter the permit matches) within the source's interval plus ten seconds, the
real worker loop running the source and sending the webhooks.

The worker runs on the test's clock: the interval's wait is the clock moved on by one interval (and
nothing arrives before); everything after runs in real time and must arrive within ten seconds."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import test_settings
from tests.factories import Factory
from tests.sources.conftest import ADMIN, add_source, later
from tests.sources.portals import SodaDataset
from tests.sources.publisher import Publisher
from tests.sources.test_portals import SODA_MAPPING, permit, stamp
from tests.webhooks.receiver import Receiver
from tests.webhooks.support import payload, receiver
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.worker.loop import Worker

__all__ = ["receiver"]
INTERVAL = timedelta(minutes=1)


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return test_settings(
        database_url,
        data_dir=tmp_path / "data",
        admin_token=ADMIN,
        webhook_allow_private=True,  # D26: the receiver is on 127.0.0.1
        webhook_retry_jitter=0.0,
        webhook_timeout_seconds=2.0,
        worker_in_process=False,
        worker_poll_seconds=0.2,
    )


async def test_a_new_permit_reaches_a_subscribed_webhook_within_the_interval_plus_ten_seconds(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, factory: Factory, clock: FixedClock,
    publisher: Publisher, receiver: Receiver,
) -> None:  # fmt: skip
    buyer = (await factory.account()).headers("full")
    # D29: a signal subscription takes the signal query's filters.
    subscribed = await client.post(
        "/api/v1/webhooks",
        json={
            "url": receiver.url("/permits"),
            "events": ["signal.created"],
            "signal_filter": {"category": "permit_filed", "state": "UT"},
        },
        headers=buyer,
    )
    assert subscribed.status_code == 201, subscribed.text
    dataset = SodaDataset(publisher)
    dataset.add(stamp(1), **permit(1))
    worker = Worker(app.state.database, settings, clock=clock, enrichment=(app.state.enrichment, app.state.secrets))
    running = asyncio.create_task(worker.run())
    try:
        await add_source(
            app, "provo", "permits-socrata", dataset.url, mapping=SODA_MAPPING, mapping_name="provo", every="1m"
        )
        # Due at once: the dataset's permit arrives.
        [first] = await receiver.wait_for(1, path="/permits", limit=10)
        assert payload(first.body)["data"]["evidence"]["permit_number"] == "BP-1"

        dataset.add(stamp(2), **permit(2))
        await asyncio.sleep(1.0)
        assert len(receiver.received("/permits")) == 1  # not before the source is due again

        started = time.monotonic()
        later(clock, seconds=INTERVAL.total_seconds())
        arrived = await receiver.wait_for(2, path="/permits", limit=10)
        took = time.monotonic() - started
        assert len(arrived) == 2, f"the new permit did not arrive within 10 s of the interval ({took:.1f} s)"
        data = payload(arrived[1].body)["data"]
        assert (data["category"], data["state"], data["evidence"]["permit_number"]) == ("permit_filed", "UT", "BP-2")
        assert took < 10
    finally:
        worker.stop()
        await running
