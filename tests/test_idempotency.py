"""D12: the same key and body returns the first response and charges once; another body is 422."""

from __future__ import annotations

import asyncio

import httpx

from tests.factories import Factory


async def test_repeat_returns_the_first_response_and_charges_nothing(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    contact = await factory.contact()
    headers = {**account.headers(), "Idempotency-Key": "reveal-1"}
    first = await client.post("/api/v1/contacts/reveal", json={"contact_id": contact}, headers=headers)
    second = await client.post("/api/v1/contacts/reveal", json={"contact_id": contact}, headers=headers)
    assert first.status_code == second.status_code == 200
    assert second.json() == first.json()
    assert second.headers["X-Credits-Charged"] == "1"  # the first response, replayed
    assert second.headers["Idempotent-Replayed"] == "true"
    ledger = (await client.get("/api/v1/account/ledger", headers=account.headers())).json()["entries"]
    assert [e["kind"] for e in ledger].count("reveal") == 1


async def test_same_key_with_another_body_is_422(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    one, two = await factory.contact(), await factory.contact(business_name="Other Co", phone=None)
    headers = {**account.headers(), "Idempotency-Key": "k"}
    await client.post("/api/v1/contacts/reveal", json={"contact_id": one}, headers=headers)
    response = await client.post("/api/v1/contacts/reveal", json={"contact_id": two}, headers=headers)
    assert response.status_code == 422
    assert response.json()["code"] == "idempotency_mismatch"


async def test_keys_are_per_account(client: httpx.AsyncClient, factory: Factory) -> None:
    one, two = await factory.account(), await factory.account()
    contact = await factory.contact()
    for account in (one, two):
        response = await client.post(
            "/api/v1/contacts/reveal",
            json={"contact_id": contact},
            headers={**account.headers(), "Idempotency-Key": "x"},
        )
        assert response.json()["credits_charged"] == 1


async def test_a_failed_request_releases_its_key(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    headers = {**account.headers(), "Idempotency-Key": "retry-me"}
    missing = await client.post("/api/v1/contacts/reveal", json={"contact_id": "ct_424242"}, headers=headers)
    assert missing.status_code == 404
    again = await client.post("/api/v1/contacts/reveal", json={"contact_id": "ct_424242"}, headers=headers)
    assert again.status_code == 404  # run again, not replayed as a success nor stuck "in progress"


async def test_twenty_identical_requests_at_once_charge_once(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    contact = await factory.contact()
    await factory.set_intent(contact, "hot")
    headers = {**account.headers(), "Idempotency-Key": "burst"}
    responses = await asyncio.gather(
        *(client.post("/api/v1/contacts/reveal", json={"contact_id": contact}, headers=headers) for _ in range(20))
    )
    statuses = sorted(r.status_code for r in responses)
    assert set(statuses) <= {200, 409}
    assert statuses.count(200) >= 1
    for response in responses:
        if response.status_code == 409:
            assert response.json()["code"] == "idempotency_in_progress"
        else:
            assert response.json()["credits_charged"] == 6
    account_view = (await client.get("/api/v1/account", headers=account.headers())).json()
    assert account_view["balance"]["total"] == 25 - 6


async def test_an_invalid_idempotency_key_is_422(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    contact = await factory.contact()
    response = await client.post(
        "/api/v1/contacts/reveal",
        json={"contact_id": contact},
        headers={**account.headers(), "Idempotency-Key": "x" * 300},
    )
    assert response.status_code == 422


async def test_a_replay_is_the_first_answer_byte_for_byte_and_the_ledger_counts_once(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    """The decision kept (docs/decisions.md, Idempotency): a replay repeats the first answer, its charge
    and its balance included, marked by Idempotent-Replayed only; summing charges counts a key once."""
    account = await factory.account()
    hot, plain = await factory.contact(), await factory.contact(business_name="Plain Co", phone="+13035550177")
    await factory.set_intent(hot, "hot")
    keyed = {**account.headers(), "Idempotency-Key": "hot-1"}
    first = await client.post("/api/v1/contacts/reveal", json={"contact_id": hot}, headers=keyed)
    assert first.status_code == 200 and "Idempotent-Replayed" not in first.headers
    assert first.headers["X-Credits-Charged"] == "6" and first.headers["X-Credits-Remaining"] == "19"
    other = await client.post("/api/v1/contacts/reveal", json={"contact_id": plain}, headers=account.headers())
    assert other.headers["X-Credits-Charged"] == "1"  # the balance is 18 now

    replay = await client.post("/api/v1/contacts/reveal", json={"contact_id": hot}, headers=keyed)
    assert replay.status_code == first.status_code and replay.content == first.content
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.headers["X-Credits-Charged"] == "6"  # what the first request charged, not this one
    assert replay.headers["X-Credits-Remaining"] == "19"  # the balance after the first request, not now
    assert replay.headers["X-Request-Id"] != first.headers["X-Request-Id"]

    # Adding up every answer counts the key twice; counting each key once agrees with the ledger.
    answers = [("hot-1", first), (None, other), ("hot-1", replay)]
    assert sum(int(r.headers["X-Credits-Charged"]) for _, r in answers) == 13
    counted: dict[object, int] = {}
    for number, (key, response) in enumerate(answers):
        counted.setdefault(key if key is not None else number, int(response.headers["X-Credits-Charged"]))
    ledger = (await client.get("/api/v1/account/ledger", headers=account.headers())).json()["entries"]
    reveals = [e for e in ledger if e["kind"] == "reveal"]
    assert sum(counted.values()) == -sum(e["amount"] for e in reveals) == 7
    assert sorted(e["reference"] for e in reveals) == sorted([hot, plain])
    balance = (await client.get("/api/v1/account", headers=account.headers())).json()["balance"]["total"]
    assert balance == 18
