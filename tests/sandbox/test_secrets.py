"""`vpx secrets rotate` re-seals test mode's customer secrets too: a service holding only the new key
still signs the sandbox's webhooks."""

from __future__ import annotations

import httpx
from cryptography.fernet import Fernet
from fastapi import FastAPI
from sqlalchemy import select

from tests.conftest import TEST_SECRET_KEY
from tests.factories import Factory
from tests.sandbox.conftest import test_keys
from tests.test_cli import vpx
from tests.webhooks.receiver import Receiver
from vpx.models import WebhookEndpoint
from vpx.secrets import SecretBox


async def test_rotation_reseals_the_sandboxs_secrets(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, receiver: Receiver, database_url: str, sandbox_url: str
) -> None:
    account = await factory.account()
    keys = await test_keys(client, account)
    made = await client.post(
        "/api/v1/webhooks",
        json={"url": receiver.url("/rotated"), "events": ["contact.revealed"]},
        headers={"X-API-Key": keys["full"]},
    )
    assert made.status_code == 201, made.text
    new = Fernet.generate_key().decode()
    environment = {"VPX_SECRET_KEYS": f"{new},{TEST_SECRET_KEY}", "VPX_SANDBOX_DATABASE_URL": sandbox_url}
    done = vpx(database_url, "secrets", "rotate", environment=environment)
    assert done["sandbox_resealed"]["webhook_endpoints.secret_sealed"] >= 1
    only_new = SecretBox.from_keys([new], origin="the new key")
    async with app.state.sandbox.database.read_sessions() as session:
        sealed = await session.scalar(
            select(WebhookEndpoint.secret_sealed).where(WebhookEndpoint.id == made.json()["id"])
        )
    assert sealed is not None and only_new.open(sealed) == made.json()["secret"]
