"""D1–D2 on every failure path: problem details, stable codes, request ids, no 5xx."""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from tests.factories import Factory


async def test_unknown_route_is_a_problem_404_with_a_request_id(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/no-such-thing")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "not_found" and body["status"] == 404
    assert body["type"] == "urn:vpx:problem:not_found"
    assert body["request_id"] == response.headers["X-Request-Id"]
    assert set(body) == {"type", "title", "status", "detail", "code", "request_id"}


async def test_wrong_method_is_405(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    response = await client.delete("/api/v1/account", headers=account.headers())
    assert response.status_code == 405
    assert response.json()["code"] == "method_not_allowed"
    assert "GET" in response.headers["Allow"]


async def test_body_over_the_limit_is_413(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    big = b'{"query": "' + b"x" * (app.state.settings.max_body_bytes + 10) + b'"}'
    response = await client.post(
        "/api/v1/contacts/search", content=big, headers={**account.headers(), "Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["code"] == "payload_too_large"


async def test_streamed_body_over_the_limit_is_413(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    limit = app.state.settings.max_body_bytes

    async def chunks():  # type: ignore[no-untyped-def]
        yield b'{"query": "'
        for _ in range(limit // 65536 + 2):
            yield b"x" * 65536
        yield b'"}'

    response = await client.post(
        "/api/v1/contacts/search", content=chunks(), headers={**account.headers(), "Content-Type": "application/json"}
    )
    assert response.status_code == 413


async def test_a_client_request_id_is_echoed_and_a_bad_one_replaced(client: httpx.AsyncClient) -> None:
    echoed = await client.get("/healthz", headers={"X-Request-Id": "abc-123"})
    assert echoed.headers["X-Request-Id"] == "abc-123"
    replaced = await client.get("/healthz", headers={"X-Request-Id": "bad id with spaces"})
    assert replaced.headers["X-Request-Id"].startswith("req_")


async def test_401_problem_for_missing_key(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/contacts/search")
    assert response.status_code == 401
    assert response.json()["code"] == "invalid_api_key"
    assert response.headers["X-Request-Id"]


async def test_garbage_never_causes_a_5xx(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account(credits=5)
    headers = {**account.headers("full"), "Content-Type": "application/json"}
    bodies = [
        b"",
        b"null",
        b"[]",
        b"{}",
        b'{"contact_id": null}',
        b'{"contact_id": {"$gt": ""}}',
        b"\xff\xfe",
        b"1e999",
    ]
    for path in ("/api/v1/contacts/reveal", "/api/v1/contacts/search", "/api/v1/contacts/ct_1/reveal"):
        for body in bodies:
            response = await client.post(path, content=body, headers=headers)
            assert response.status_code < 500, (path, body, response.text)
    for query in ("limit=1e3", "offset=99999999999999999999", "state=%00", "q=%ff", "city=" + "a" * 500):
        response = await client.get(f"/api/v1/contacts/search?{query}", headers=headers)
        assert response.status_code < 500, query


async def test_nul_characters_are_refused_not_a_5xx(client: httpx.AsyncClient, factory: Factory, backend: str) -> None:
    account = await factory.account()
    headers = account.headers("full")
    for path in ("/api/v1/contacts/search?city=a%00b", "/api/v1/contacts/search?q=a%00b", "/api/v1/webhooks/wh_a%00b"):
        response = await client.get(path, headers=headers)
        assert response.status_code < 500, (path, response.text)
    row = {"business_name": "Nul\u0000 Bakery", "phone": "+13035550177", "city": "Denver", "state": "CO"}
    response = await client.post(
        "/api/v1/contacts/contribute", json={"contacts": [{**row, "industry": "restaurants"}]}, headers=headers
    )
    assert response.status_code < 500, response.text


async def test_data_exceptions_from_the_database_are_422(app: FastAPI) -> None:
    """SQLSTATE class 22 (e.g. 22021, a NUL character on PostgreSQL) is the input's fault."""
    import pytest
    from sqlalchemy.exc import DBAPIError
    from starlette.requests import Request

    from vpx.errors import _on_database_error

    class Orig(Exception):
        sqlstate = "22021"

    request = Request({"type": "http", "method": "GET", "path": "/", "headers": [], "state": {}, "app": app})
    response = await _on_database_error(request, DBAPIError("SELECT 1", {}, Orig("bad byte")))
    assert response.status_code == 422
    Orig.sqlstate = "40P01"  # a deadlock is not the caller's fault: it stays an error
    with pytest.raises(DBAPIError):
        await _on_database_error(request, DBAPIError("SELECT 1", {}, Orig("deadlock")))
