"""Key management API (D28): list, create (secret once), rename, IP allow-list, revoke; the 5-key
limit (D5), last_used_at and rotate_by (D28), idempotent creation (D12), other accounts' keys (D2)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import select

from tests.conftest import START
from tests.factories import Factory
from vpx.clock import FixedClock
from vpx.models import ApiKey, IdempotencyRecord

pytestmark = pytest.mark.asyncio


async def create(client: httpx.AsyncClient, headers: dict[str, str], **body: object) -> httpx.Response:
    return await client.post("/api/v1/keys", json={"type": "live", "name": "ci", **body}, headers=headers)


async def test_created_key_shows_its_secret_once_and_works(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    response = await create(client, account.headers("full"), type="ro", name="reporting")
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["secret"].startswith("vpx_ro_") and body["prefix"] == body["secret"][:11]
    assert body["type"] == "ro" and body["type_label"] == "Read Only" and body["name"] == "reporting"
    assert body["status"] == "active" and body["ip_allowlist"] == [] and body["last_used_at"] is None
    assert response.headers["Location"] == f"/api/v1/keys/{body['id']}"
    assert response.headers["Cache-Control"] == "no-store"
    used = await client.get("/api/v1/account", headers={"X-API-Key": body["secret"]})
    assert used.status_code == 200 and used.json()["id"] == account.id
    listed = await client.get("/api/v1/keys", headers=account.headers("full"))
    assert body["secret"] not in listed.text
    shown = await client.get(f"/api/v1/keys/{body['id']}", headers=account.headers("full"))
    assert shown.status_code == 200 and "secret" not in shown.json()


async def test_secret_is_never_stored(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    headers = {**account.headers("full"), "Idempotency-Key": "create-1"}
    secret = (await create(client, headers)).json()["secret"]
    async with factory.database.read_sessions() as session:
        stored = [r.response_body for r in await session.scalars(select(IdempotencyRecord))]
        hashes = [k.secret_hash for k in await session.scalars(select(ApiKey))]
    assert stored and all(secret not in (body or "") for body in stored)
    assert secret not in hashes


async def test_list_shows_active_keys_first_with_counts(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    old = (await client.get("/api/v1/keys", headers=account.headers("full"))).json()
    assert old["active_keys"] == 3 and old["max_active_keys"] == 5
    ro = next(k for k in old["keys"] if k["type"] == "ro")
    await client.delete(f"/api/v1/keys/{ro['id']}", headers=account.headers("full"))
    listed = (await client.get("/api/v1/keys", headers=account.headers("full"))).json()
    assert listed["active_keys"] == 2
    assert [k["status"] for k in listed["keys"]] == ["active", "active", "revoked"]
    only_active = (await client.get("/api/v1/keys?status=active", headers=account.headers("full"))).json()
    assert ro["id"] not in {k["id"] for k in only_active["keys"]} and len(only_active["keys"]) == 2
    only_revoked = (await client.get("/api/v1/keys?status=revoked", headers=account.headers("full"))).json()
    assert [k["id"] for k in only_revoked["keys"]] == [ro["id"]]
    bad = await client.get("/api/v1/keys?status=gone&colour=red", headers=account.headers("full"))
    assert bad.status_code == 422


async def test_sixth_active_key_is_409_until_one_is_revoked(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()  # ro, live, full
    for _ in range(2):
        assert (await create(client, account.headers("full"))).status_code == 201
    refused = await create(client, account.headers("full"))
    assert refused.status_code == 409 and refused.json()["code"] == "key_limit_reached"
    keys = (await client.get("/api/v1/keys", headers=account.headers("full"))).json()["keys"]
    ro = next(k for k in keys if k["type"] == "ro")
    assert (await client.delete(f"/api/v1/keys/{ro['id']}", headers=account.headers("full"))).status_code == 200
    assert (await create(client, account.headers("full"))).status_code == 201


async def test_concurrent_creation_never_passes_the_limit(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account(key_types=("full",))
    responses = await asyncio.gather(*(create(client, account.headers("full")) for _ in range(12)))
    statuses = sorted(r.status_code for r in responses)
    assert statuses.count(201) == 4 and statuses.count(409) == 8, statuses
    listed = (await client.get("/api/v1/keys", headers=account.headers("full"))).json()
    assert listed["active_keys"] == 5


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"type": "admin"}, "type"),
        ({"type": "live", "ip_allowlist": ["10.0.0.300"]}, "ip_allowlist[0]"),
        ({"type": "live", "ip_allowlist": ["10.0.0.0/255.0.0.0"]}, "ip_allowlist[0]"),
        ({"type": "live", "ip_allowlist": ["010.0.0.1"]}, "ip_allowlist[0]"),
        ({"type": "live", "ip_allowlist": [" 10.0.0.1"]}, "ip_allowlist[0]"),
        ({"type": "live", "ip_allowlist": ["fe80::1%eth0"]}, "ip_allowlist[0]"),
        ({"type": "live", "ip_allowlist": ["x" * 65]}, "ip_allowlist[0]"),
        ({"type": "live", "ip_allowlist": "10.0.0.1"}, "ip_allowlist"),
        ({"type": 1}, "type"),
        ({"type": "live", "name": False}, "name"),
        ({"type": "live", "name": "tab\there"}, "name"),
        ({"type": "live", "name": "nul\u0000"}, "name"),
        ({"type": "live", "name": "n" * 201}, "name"),
        ({"type": "live", "colour": "red"}, "colour"),
        ({"name": "no type"}, "type"),
    ],
)
async def test_invalid_creation_is_422_and_creates_nothing(
    client: httpx.AsyncClient, factory: Factory, body: dict[str, object], field: str
) -> None:
    account = await factory.account()
    response = await client.post("/api/v1/keys", json=body, headers=account.headers("full"))
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "invalid_parameters"
    assert field in [e["field"] for e in response.json()["errors"]]
    listed = (await client.get("/api/v1/keys", headers=account.headers("full"))).json()
    assert listed["active_keys"] == 3


async def test_rename_and_allowlist(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    key = (await create(client, account.headers("full"), type="ro")).json()
    path, manage = f"/api/v1/keys/{key['id']}", account.headers("full")
    renamed = await client.patch(path, json={"name": "  dashboards  "}, headers=manage)
    assert renamed.status_code == 200 and renamed.json()["name"] == "dashboards"
    limited = await client.patch(path, json={"ip_allowlist": ["203.0.113.7", "2001:db8::1/48"]}, headers=manage)
    assert limited.json()["ip_allowlist"] == ["203.0.113.7/32", "2001:db8::/48"]
    assert limited.json()["name"] == "dashboards"
    refused = await client.get("/api/v1/account", headers={"X-API-Key": key["secret"]})
    assert refused.status_code == 403 and refused.json()["code"] == "ip_not_allowed"
    await client.patch(path, json={"ip_allowlist": ["127.0.0.0/8"]}, headers=manage)
    assert (await client.get("/api/v1/account", headers={"X-API-Key": key["secret"]})).status_code == 200
    bad = await client.patch(path, json={"ip_allowlist": ["not-an-ip"]}, headers=manage)
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "ip_allowlist[0]"
    forms = ["2001:DB8::1", "2001:db8::/32", "0.0.0.0/0", "::/0"]
    accepted = await client.patch(path, json={"ip_allowlist": forms}, headers=manage)
    assert accepted.json()["ip_allowlist"] == ["2001:db8::1/128", "2001:db8::/32", "0.0.0.0/0", "::/0"]
    await client.patch(path, json={"ip_allowlist": ["127.0.0.0/8"]}, headers=manage)
    assert (await client.get(path, headers=manage)).json()["ip_allowlist"] == ["127.0.0.0/8"]


async def test_revoked_key_is_401_and_cannot_be_changed(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    key = (await create(client, account.headers("full"))).json()
    path, manage = f"/api/v1/keys/{key['id']}", account.headers("full")
    revoked = await client.delete(path, headers=manage)
    assert revoked.status_code == 200 and revoked.json()["status"] == "revoked"
    assert revoked.json()["revoked_at"] is not None
    used = await client.get("/api/v1/account", headers={"X-API-Key": key["secret"]})
    assert used.status_code == 401 and used.json()["code"] == "invalid_api_key"
    again = await client.delete(path, headers=manage)
    assert again.status_code == 200 and again.json()["revoked_at"] == revoked.json()["revoked_at"]
    changed = await client.patch(path, json={"name": "back"}, headers=manage)
    assert changed.status_code == 409 and changed.json()["code"] == "conflict"


async def test_a_key_can_revoke_itself(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    keys = (await client.get("/api/v1/keys", headers=account.headers("full"))).json()["keys"]
    itself = next(k for k in keys if k["type"] == "full")
    assert (await client.delete(f"/api/v1/keys/{itself['id']}", headers=account.headers("full"))).status_code == 200
    assert (await client.get("/api/v1/keys", headers=account.headers("full"))).status_code == 401


async def test_keys_of_another_account_are_404_and_untouched(client: httpx.AsyncClient, factory: Factory) -> None:
    mine, theirs = await factory.account(), await factory.account()
    their_keys = (await client.get("/api/v1/keys", headers=theirs.headers("full"))).json()["keys"]
    for key in their_keys:
        path = f"/api/v1/keys/{key['id']}"
        for method, body in (("GET", None), ("PATCH", {"name": "stolen"}), ("DELETE", None)):
            response = await client.request(method, path, json=body, headers=mine.headers("full"))
            assert response.status_code == 404 and response.json()["code"] == "not_found", (method, path)
    after = (await client.get("/api/v1/keys", headers=theirs.headers("full"))).json()["keys"]
    assert after == their_keys
    listed = (await client.get("/api/v1/keys", headers=mine.headers("full"))).text
    assert all(key["id"] not in listed for key in their_keys)


@pytest.mark.parametrize("key_id", ["%00", "key_%00", "key_" + "a" * 33, "ct_1", "key_a-b"])
async def test_malformed_key_ids_are_404(client: httpx.AsyncClient, factory: Factory, key_id: str) -> None:
    account = await factory.account()
    for method, body in (("GET", None), ("PATCH", {"name": "x"}), ("DELETE", None)):
        response = await client.request(method, f"/api/v1/keys/{key_id}", json=body, headers=account.headers("full"))
        assert response.status_code == 404 and response.json()["code"] == "not_found", (method, key_id)


async def test_last_used_at_is_recorded(client: httpx.AsyncClient, factory: Factory, clock: FixedClock) -> None:
    account = await factory.account()
    clock.set(START + timedelta(hours=2))
    await client.get("/api/v1/account", headers=account.headers("ro"))
    keys = (await client.get("/api/v1/keys", headers=account.headers("full"))).json()["keys"]
    by_type = {k["type"]: k for k in keys}
    assert by_type["ro"]["last_used_at"] == "2026-11-15T14:00:00Z"
    assert by_type["live"]["last_used_at"] is None


async def test_rotate_by_is_90_days_and_overdue_keys_warn(
    client: httpx.AsyncClient, factory: Factory, clock: FixedClock
) -> None:
    account = await factory.account()
    key = (await create(client, account.headers("full"), type="ro")).json()
    assert key["rotate_by"] == "2027-02-13T12:00:00Z" and key["rotation_due"] is False
    fresh = await client.get("/api/v1/account", headers={"X-API-Key": key["secret"]})
    assert "Warning" not in fresh.headers and "X-Key-Rotate-By" not in fresh.headers
    clock.set(START + timedelta(days=91))
    late = await client.get("/api/v1/account", headers={"X-API-Key": key["secret"]})
    assert late.status_code == 200
    assert late.headers["X-Key-Rotate-By"] == "2027-02-13"
    assert late.headers["Warning"].startswith("299 vpx ")
    listed = (await client.get("/api/v1/keys", headers=account.headers("full"))).json()["keys"]
    assert next(k for k in listed if k["id"] == key["id"])["rotation_due"] is True


async def test_idempotent_creation_makes_one_key(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    headers = {**account.headers("full"), "Idempotency-Key": "rotate-2026-11"}
    first = await create(client, headers, name="rotation")
    second = await create(client, headers, name="rotation")
    assert first.status_code == second.status_code == 201
    assert second.json()["id"] == first.json()["id"]
    assert first.json()["secret"] and second.json()["secret"] is None
    assert second.headers["Idempotent-Replayed"] == "true"
    assert (await client.get("/api/v1/keys", headers=account.headers("full"))).json()["active_keys"] == 4
    other_body = await create(client, headers, name="another")
    assert other_body.status_code == 422 and other_body.json()["code"] == "idempotency_mismatch"


async def test_the_list_pages_with_limit_and_cursor(
    client: httpx.AsyncClient, factory: Factory, clock: FixedClock
) -> None:
    account = await factory.account(key_types=("full",))
    headers = account.headers("full")
    for minute in range(1, 7):  # six more keys, some at the same instant, three of them revoked
        clock.set(START + timedelta(minutes=minute // 2))
        made = (await create(client, headers, name=f"k{minute}")).json()
        if minute % 2:
            await client.delete(f"/api/v1/keys/{made['id']}", headers=headers)
    whole = (await client.get("/api/v1/keys", headers=headers)).json()
    assert whole["limit"] == 100 and whole["next_cursor"] is None and len(whole["keys"]) == 7
    assert whole["active_keys"] == 4 and whole["max_active_keys"] == 5 and whole["max_keys"] == 100
    for status, expected in (
        (None, whole["keys"]),
        ("revoked", [k for k in whole["keys"] if k["status"] == "revoked"]),
    ):
        pages, cursor = [], None
        while True:
            params = {"limit": 2, **({"cursor": cursor} if cursor else {}), **({"status": status} if status else {})}
            page = (await client.get("/api/v1/keys", params=params, headers=headers)).json()
            assert page["limit"] == 2 and len(page["keys"]) <= 2
            pages.append([k["id"] for k in page["keys"]])
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert [key for page in pages for key in page] == [k["id"] for k in expected], status
        assert all(pages)  # no empty page before the end
    for bad in ({"cursor": "not-a-cursor"}, {"cursor": "bGVkZ2VyOjU"}, {"limit": 0}, {"limit": 101}):
        refused = await client.get("/api/v1/keys", params=bad, headers=headers)
        assert refused.status_code == 422 and refused.json()["code"] == "invalid_parameters", bad


async def test_an_account_keeps_at_most_max_keys_forgetting_the_longest_revoked(
    client: httpx.AsyncClient, factory: Factory, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vpx.auth import service as key_service

    monkeypatch.setattr(key_service, "MAX_KEYS_PER_ACCOUNT", 6)
    account = await factory.account(key_types=("full",))
    headers = account.headers("full")
    revoked = []
    for minute in range(1, 8):  # seven keys made and revoked, one a minute
        clock.set(START + timedelta(minutes=minute))
        made = (await create(client, headers)).json()
        await client.delete(f"/api/v1/keys/{made['id']}", headers=headers)
        revoked.append(made["id"])
    listed = (await client.get("/api/v1/keys", headers=headers)).json()
    assert len(listed["keys"]) == 6 and listed["max_keys"] == 6
    # The two revoked longest ago made room; the rest, and the account's working key, stay.
    assert {k["id"] for k in listed["keys"] if k["status"] == "revoked"} == set(revoked[2:])
    assert (await client.get(f"/api/v1/keys/{revoked[0]}", headers=headers)).status_code == 404
    assert (await client.get("/api/v1/account", headers=headers)).status_code == 200
    async with factory.database.read_sessions() as session:
        assert len(list(await session.scalars(select(ApiKey).where(ApiKey.account_id == account.id)))) == 6


async def test_an_account_of_active_keys_only_is_refused_past_max_keys(
    client: httpx.AsyncClient, factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vpx.auth import service as key_service

    monkeypatch.setattr(key_service, "MAX_KEYS_PER_ACCOUNT", 4)
    factory.app.state.settings = factory.app.state.settings.model_copy(update={"max_active_keys": 10})
    account = await factory.account()  # ro, live, full
    assert (await create(client, account.headers("full"))).status_code == 201
    refused = await create(client, account.headers("full"))
    assert refused.status_code == 409 and refused.json()["code"] == "key_limit_reached"
    assert "4 keys" in refused.json()["detail"]
