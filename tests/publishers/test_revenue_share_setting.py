"""D17: the revenue share percentage is a setting; odd percentages are kept exact to 1/10,000 credit."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import test_settings as make_settings
from tests.factories import Factory
from tests.publishers.test_revenue_share import contributed, entries
from vpx.config import Settings

pytestmark = pytest.mark.asyncio


@pytest.fixture
def settings(database_url: str) -> Settings:
    return make_settings(database_url, revenue_share_percent=Decimal("33.3333"), worker_in_process=False)


async def test_a_configured_share_rounds_to_the_ten_thousandth(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    publisher, buyer = await factory.account(), await factory.account()
    [contact] = await contributed(client, publisher.headers(), ["Odd Share Law"], "737")
    await factory.set_intent(contact, "warm")
    await client.post(f"/api/v1/contacts/{contact}/reveal", headers=buyer.headers())
    [share] = await entries(app, publisher.id, "revenue_share")
    assert share.amount == Decimal("0.9999")  # 3 × 33.3333 % = 0.999999, rounded down to 1/10,000
