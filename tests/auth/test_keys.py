"""D3 key format and storage, D5 the five-key limit, revocation."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import event, select

from tests.factories import Factory
from vpx.auth import service as key_service
from vpx.auth.keys import PREFIXES, KeyType, checksum, generate_key, hash_key, parse_key
from vpx.errors import KeyLimitReached
from vpx.models import ApiKey


def test_generated_keys_have_the_d3_format() -> None:
    for key_type, prefix in PREFIXES.items():
        key = generate_key(key_type)
        assert key.startswith(prefix)
        assert len(key) == len(prefix) + 32 + 6
        assert parse_key(key) is key_type


@pytest.mark.parametrize("key_type", list(KeyType))
def test_one_changed_character_fails_the_checksum(key_type: KeyType) -> None:
    key = generate_key(key_type)
    body = len(PREFIXES[key_type]) + 5
    changed = key[:body] + ("A" if key[body] != "A" else "B") + key[body + 1 :]
    assert parse_key(changed) is None


def test_malformed_strings_are_not_keys() -> None:
    good = generate_key(KeyType.live)
    for raw in (
        "",
        "vpx_live_",
        "vpx_live_short",
        "sk_live_" + good[9:],
        good + "x",
        good.replace("_", "-"),
        "vpx_admin_" + good[9:],
    ):
        assert parse_key(raw) is None, raw
    head = "vpx_ro_" + "a" * 32
    assert parse_key(head + checksum(head)) is KeyType.ro


async def test_only_the_hash_is_stored(app: FastAPI, factory: Factory) -> None:
    account = await factory.account(key_types=("live",))
    secret = account.keys["live"]
    async with factory.database.read_sessions() as session:
        stored = (await session.scalars(select(ApiKey))).one()
    assert stored.secret_hash == hash_key(secret)
    assert secret not in {str(v) for v in vars(stored).values()}
    assert stored.display_prefix == secret[: len("vpx_live_") + 4]


async def test_malformed_key_is_401_without_a_database_lookup(app: FastAPI, client: httpx.AsyncClient) -> None:
    statements: list[str] = []
    engines = {app.state.database.read_engine, app.state.database.write_engine}

    def count(conn: object, cursor: object, statement: str, *args: object) -> None:
        statements.append(statement)

    for engine in engines:
        event.listen(engine.sync_engine, "before_cursor_execute", count)
    try:
        forged = "vpx_live_" + "A" * 32 + "AAAAAA"
        for raw in ("nonsense", forged, ""):
            response = await client.get("/api/v1/account", headers={"X-API-Key": raw})
            assert response.status_code == 401
            assert response.json()["code"] == "invalid_api_key"
        response = await client.get("/api/v1/account")
        assert response.status_code == 401
    finally:
        for engine in engines:
            event.remove(engine.sync_engine, "before_cursor_execute", count)
    assert statements == []


async def test_unknown_but_well_formed_key_is_401(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/account", headers={"X-API-Key": generate_key(KeyType.full)})
    assert response.status_code == 401 and response.json()["code"] == "invalid_api_key"
    assert response.headers["WWW-Authenticate"].startswith("ApiKey")


async def test_revoked_key_is_401_at_once(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    assert (await client.get("/api/v1/account", headers=account.headers())).status_code == 200
    async with factory.database.write_sessions() as session, session.begin():
        key_id = (await session.scalars(select(ApiKey.id).where(ApiKey.key_type == "live"))).one()
        await key_service.revoke_key(session, key_id=key_id, now=factory.clock.now())
    response = await client.get("/api/v1/account", headers=account.headers())
    assert response.status_code == 401
    assert "revoked" in response.json()["detail"]
    assert (await client.get("/api/v1/account", headers=account.headers("ro"))).status_code == 200


async def test_a_sixth_active_key_is_refused_and_revoked_keys_do_not_count(factory: Factory) -> None:
    account = await factory.account(key_types=("ro", "live", "full"))
    await factory.key(account.id, "live")
    await factory.key(account.id, "full")
    with pytest.raises(KeyLimitReached) as refused:
        await factory.key(account.id, "ro")
    assert refused.value.status == 409 and refused.value.code == "key_limit_reached"
    async with factory.database.write_sessions() as session, session.begin():
        first = (await session.scalars(select(ApiKey.id).where(ApiKey.account_id == account.id))).first()
        assert first is not None
        await key_service.revoke_key(session, key_id=first, now=factory.clock.now())
    await factory.key(account.id, "ro")  # D5: rotation works once the old key is revoked


async def test_rotation_overlap_both_keys_work(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account(key_types=("live",))
    new = await factory.key(account.id, "live")
    for key in (account.keys["live"], new):
        assert (await client.get("/api/v1/account", headers={"X-API-Key": key})).status_code == 200


async def test_key_past_rotate_by_answers_with_a_warning(client: httpx.AsyncClient, factory: Factory) -> None:
    from datetime import timedelta

    account = await factory.account()
    fresh = await client.get("/api/v1/account", headers=account.headers())
    assert "Warning" not in fresh.headers
    factory.clock.set(factory.clock.now() + timedelta(days=91))
    old = await client.get("/api/v1/account", headers=account.headers())
    assert old.status_code == 200
    assert old.headers["Warning"].startswith("299 ")
    assert old.headers["X-Key-Rotate-By"] == "2027-02-13"


async def test_last_used_at_is_recorded(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account(key_types=("ro",))
    await client.get("/api/v1/account", headers=account.headers("ro"))
    async with factory.database.read_sessions() as session:
        key = (await session.scalars(select(ApiKey))).one()
    assert key.last_used_at == factory.clock.now()
