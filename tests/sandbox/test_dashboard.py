"""The dashboard's test-mode switch: the keys page lists and makes test keys in test mode, marked as
such, with the test balance; live mode's page never lists a test key, nor test mode's a live one."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from decimal import Decimal

import httpx
import pytest
from fastapi import FastAPI

from tests.dashboard.conftest import Browser, browser, secret_of
from tests.sandbox.conftest import sandbox_settings
from vpx.config import Settings


@pytest.fixture
def settings(database_url: str, sandbox_url: str) -> Settings:
    return sandbox_settings(
        database_url, sandbox_url, login_rate_limit="1000/minute", signup_rate_limit="1000/minute", mail_to_log=True
    )


@pytest.fixture
async def web(app: FastAPI) -> AsyncIterator[Browser]:
    async with browser(app) as http:
        yield Browser(http)


async def test_the_keys_page_switches_to_test_mode(web: Browser, client: httpx.AsyncClient) -> None:
    await web.sign_up()
    live = secret_of((await web.create_key("full", name="Warehouse sync")).text)
    live_page = await web.get("/dashboard/keys")
    assert 'href="/dashboard/keys?mode=test"' in live_page.text and "Test mode" not in live_page.text

    test_page = await web.get("/dashboard/keys?mode=test")
    assert test_page.status_code == 200
    assert "Test mode" in test_page.text and "1,025 credits" in test_page.text.replace("1025", "1,025")
    assert "Warehouse sync" not in test_page.text and "vpx_test_live_" in test_page.text
    made = await web.submit(
        "/dashboard/keys?mode=test",
        "/dashboard/keys",
        {"type": "live", "name": "ci", "ip_allowlist": "", "mode": "test"},
    )
    assert made.status_code == 201, made.text
    shown = re.search(r'data-testid="secret"|value="(vpx_test_live_[A-Za-z0-9]+)"', made.text)
    found = re.search(r'value="(vpx_test_live_[A-Za-z0-9]+)"', made.text)
    assert shown and found, "no test key on the page"
    secret = found.group(1)
    assert secret.startswith("vpx_test_live_") and "Test mode" in made.text
    assert 'href="/dashboard/keys?mode=test"' in made.text

    test_page = await web.get("/dashboard/keys?mode=test")
    assert "ci" in test_page.text and secret[:18] in test_page.text and "Warehouse sync" not in test_page.text
    live_page = await web.get("/dashboard/keys")
    assert secret[:18] not in live_page.text and "Warehouse sync" in live_page.text

    seen = (await client.get("/api/v1/account", headers={"X-API-Key": secret})).json()
    assert seen["livemode"] is False and Decimal(str(seen["balance"]["total"])) == Decimal(1025)
    assert (await client.get("/api/v1/account", headers={"X-API-Key": live})).json()["livemode"] is True
