"""Deleting an account deletes its test mode too: the sandbox's webhooks (their secrets) and the rest
that acts for it are gone, as in the main database, whether the operator's API or `vpx accounts delete`
deletes it."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.factories import Factory
from tests.sandbox.conftest import sandbox_settings, test_keys
from tests.test_cli import vpx
from vpx.config import Settings
from vpx.models import Account, WebhookEndpoint

ADMIN = "sandbox-deletion-admin-token-0123456789"


@pytest.fixture
def settings(database_url: str, sandbox_url: str) -> Settings:
    return sandbox_settings(database_url, sandbox_url, admin_token=ADMIN)


async def _sandbox_webhooks(app: FastAPI, account_id: str) -> int:
    async with app.state.sandbox.database.read_sessions() as session:
        found = await session.scalar(
            select(func.count()).select_from(WebhookEndpoint).where(WebhookEndpoint.account_id == account_id)
        )
        return int(found or 0)


async def _with_test_webhook(client: httpx.AsyncClient, factory: Factory) -> str:
    account = await factory.account()
    keys = await test_keys(client, account)
    made = await client.post(
        "/api/v1/webhooks",
        json={"url": "http://127.0.0.1:9/vpx", "events": ["contact.revealed"]},
        headers={"X-API-Key": keys["full"]},
    )
    assert made.status_code == 201, made.text
    return account.id


@pytest.mark.parametrize("by", ["api", "cli"])
async def test_deleting_an_account_deletes_its_test_mode(
    by: str, app: FastAPI, client: httpx.AsyncClient, factory: Factory, database_url: str, sandbox_url: str
) -> None:
    account_id = await _with_test_webhook(client, factory)
    assert await _sandbox_webhooks(app, account_id) == 1
    if by == "api":
        deleted = await client.delete(f"/api/v1/admin/accounts/{account_id}", headers={"X-Admin-Token": ADMIN})
        assert deleted.status_code == 200, deleted.text
    else:
        environment = {"VPX_SANDBOX_DATABASE_URL": sandbox_url}
        vpx(database_url, "accounts", "delete", account_id, "--yes", environment=environment)
    assert await _sandbox_webhooks(app, account_id) == 0
    async with app.state.sandbox.database.read_sessions() as session:
        shadow = await session.get(Account, account_id, populate_existing=True)
    assert shadow is not None and shadow.status == "deleted"
