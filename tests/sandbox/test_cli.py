"""`vpx keys create --test`: a test key made by the operator's command, which works at once against the
sandbox; with test mode off the command refuses."""

from __future__ import annotations

from decimal import Decimal

import httpx

from tests.factories import Factory
from tests.test_cli import vpx


async def test_keys_create_test_makes_a_test_key(
    client: httpx.AsyncClient, factory: Factory, database_url: str, sandbox_url: str
) -> None:
    account = await factory.account()
    environment = {"VPX_SANDBOX_DATABASE_URL": sandbox_url}
    made = vpx(
        database_url, "keys", "create", "--account", account.id, "--type", "live", "--test", environment=environment
    )
    assert made["key"].startswith("vpx_test_live_") and made["mode"] == "test"
    test = {"X-API-Key": made["key"]}
    seen = await client.get("/api/v1/account", headers=test)
    assert seen.status_code == 200, seen.text
    assert seen.json()["livemode"] is False and Decimal(str(seen.json()["balance"]["total"])) == Decimal(1025)
    listed = vpx(database_url, "keys", "list", "--account", account.id)
    assert {k["mode"] for k in listed["keys"]} == {"live", "test"}

    off = {**environment, "VPX_TEST_MODE": "false"}
    refused = vpx(
        database_url, "keys", "create", "--account", account.id, "--type", "ro", "--test", check=False, environment=off
    )
    assert refused["error"]["code"] == "invalid_parameters"
