"""Customer secrets sealed at rest (vpx.secrets): the box, the generated key file, keys that stop the
service at start, rotation by the real CLI while the old key still opens."""

from __future__ import annotations

import stat
from pathlib import Path

import httpx
import pytest
from cryptography.fernet import Fernet
from fastapi import FastAPI
from sqlalchemy import select

from tests.conftest import TEST_SECRET_KEY, test_settings
from tests.factories import Factory
from tests.test_cli import vpx
from vpx.app import create_app
from vpx.config import Settings
from vpx.models import EnrichmentKey
from vpx.secrets import SecretBox, SecretsUnavailable, generate_key, load_box


def test_a_sealed_secret_opens_with_any_key_and_reseals_with_the_first() -> None:
    old, new = generate_key(), generate_key()
    sealed = SecretBox.from_keys([old], origin="old").seal("sk_live_ABCDEF")
    assert "sk_live_ABCDEF" not in sealed
    both = SecretBox.from_keys([new, old], origin="both")
    assert both.open(sealed) == "sk_live_ABCDEF"
    resealed = both.reseal(sealed)
    assert SecretBox.from_keys([new], origin="new").open(resealed) == "sk_live_ABCDEF"
    with pytest.raises(SecretsUnavailable, match="none of the keys"):
        SecretBox.from_keys([new], origin="new").open(sealed)


def test_without_keys_one_is_generated_once_into_the_data_directory(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/x.db", data_dir=tmp_path / "var")
    first = load_box(settings)
    key_file = tmp_path / "var" / "secret.keys"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    second = load_box(settings)  # the same file: what the first sealed, the second opens
    assert second.open(first.seal("pw")) == "pw"
    assert [p.name for p in (tmp_path / "var").iterdir()] == ["secret.keys"]


@pytest.mark.parametrize("value", ["", "not-a-key", f"{TEST_SECRET_KEY},short"])
def test_a_set_but_unusable_value_stops_the_service_at_start(tmp_path: Path, value: str) -> None:
    settings = test_settings(f"sqlite+aiosqlite:///{tmp_path}/x.db", secret_keys=value)
    with pytest.raises(SecretsUnavailable) as refused:
        create_app(settings)
    assert "VPX_SECRET_KEYS" in str(refused.value)
    assert "not-a-key" not in str(refused.value) and "short" not in str(refused.value)  # never the value


async def test_rotation_reseals_every_provider_key_with_the_new_key(
    database_url: str, client: httpx.AsyncClient, app: FastAPI, factory: Factory
) -> None:
    account = await factory.account()
    stored = await client.put(
        "/api/v1/enrichment/keys/hunter", json={"api_key": "hunter-secret-0001"}, headers=account.headers("full")
    )
    assert stored.status_code == 200, stored.text
    new = Fernet.generate_key().decode()
    done = vpx(database_url, "secrets", "rotate", environment={"VPX_SECRET_KEYS": f"{new},{TEST_SECRET_KEY}"})
    assert done["resealed"]["enrichment_keys.key_sealed"] == 1 and done["keys"] == 2
    async with app.state.database.read_sessions() as session:
        sealed = await session.scalar(select(EnrichmentKey.key_sealed))
    assert sealed is not None and SecretBox.from_keys([new], origin="new").open(sealed) == "hunter-secret-0001"
    generated = vpx(database_url, "secrets", "generate")
    assert Fernet(generated["key"].encode())
