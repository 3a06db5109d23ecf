"""Operations: liveness, readiness, Prometheus metrics, structured access logs."""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from tests.factories import Factory


async def test_healthz_and_readyz(client: httpx.AsyncClient, backend: str) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    ready = await client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["database"] == backend


async def test_readyz_is_503_when_the_database_is_unreachable(clock: object) -> None:
    from tests.conftest import asgi_client, test_settings
    from vpx.app import create_app

    app = create_app(test_settings("postgresql+asyncpg://nobody@127.0.0.1:1/none"))
    async with asgi_client(app) as http:
        response = await http.get("/readyz")
    assert response.status_code == 503


async def test_metrics_count_requests_reveals_and_credits(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    contact = await factory.contact()
    await factory.set_intent(contact, "warm")
    before = (await client.get("/metrics")).text
    await client.post(f"/api/v1/contacts/{contact}/reveal", headers=account.headers())
    await client.get("/api/v1/contacts/search", params={"q": "acme"}, headers=account.headers())
    text = (await client.get("/metrics")).text

    def value(body: str, name: str) -> float:
        for line in body.splitlines():
            if line.split(" ")[0] == name:
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    assert value(text, "vpx_credits_spent_total") - value(before, "vpx_credits_spent_total") == 3
    assert 'vpx_reveals_total{outcome="revealed"}' in text
    assert 'route="/api/v1/contacts/search"' in text and 'status="200"' in text
    assert "vpx_http_request_duration_seconds_bucket" in text


async def test_access_log_lines_are_json_with_the_request_id(
    client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    from vpx.logs import JsonFormatter

    logger = logging.getLogger("vpx.access")
    logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.INFO, logger="vpx.access"):
            response = await client.get("/healthz")
    finally:
        logger.removeHandler(caplog.handler)
    records = [r for r in caplog.records if r.name == "vpx.access"]
    assert records
    line = json.loads(JsonFormatter().format(records[-1]))
    assert line["request_id"] == response.headers["X-Request-Id"]
    assert line["status"] == 200 and line["path"] == "/healthz" and "duration_ms" in line
