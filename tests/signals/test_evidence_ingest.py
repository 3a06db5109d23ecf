"""D36: evidence events through the real CLI (`vpx signals ingest FILE --json`) and the operator API
(`POST /api/v1/admin/signals` with X-Admin-Token): bad lines reported by number and skipped, the
others in; re-running is a no-op; the token is required and is not a customer key."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests.conftest import asgi_client, test_settings, wipe
from tests.factories import Factory
from tests.test_cli import vpx
from vpx.app import create_app
from vpx.clock import FixedClock
from vpx.models import Signal

pytestmark = pytest.mark.asyncio
TOKEN = "operator-secret-token-for-tests"


def _line(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "category": "switching_intent",
        "industry": "saas",
        "observed_at": "2026-11-14T09:30:00Z",
        "business": {"name": "Northwind Traders", "city": "Seattle", "state": "WA", "phone": "+12065550123"},
        "evidence": {"vendor_named": "Zendesk", "timeline": "Q2", "budget": "$40k", "vendor_evaluation": True},
    }
    base.update(fields)
    return base


async def _signals(app: FastAPI) -> list[Signal]:
    async with app.state.database.read_sessions() as session:
        return list(await session.scalars(select(Signal).order_by(Signal.sequence)))


async def test_cli_ingests_a_file_and_reports_bad_lines(app: FastAPI, database_url: str, tmp_path: Path) -> None:
    lines = [
        json.dumps(_line(topic="helpdesk")),
        "{not json",
        json.dumps(_line(industry="spaceships")),
        "",
        json.dumps(_line(category="tech_install", evidence={"technology": "kubernetes"}, custom_attr=1)),
        json.dumps(_line(category="bant_qualified", evidence={"budget": "$1"})),
        json.dumps(_line(category="tech_install", evidence={"technology": "snowflake", "credit_score": 640})),
        json.dumps(_line(category="tech_install", evidence={"technology": "okta", "internal_note": "kept"})),
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = vpx(database_url, "signals", "ingest", str(path))
    assert result["ingested"] == 3 and result["fcra_blocked"] == 1
    assert result["contacts_created"] == 1 and result["contacts_linked"] == 1  # one business, matched after
    assert [(s["line"], s["reason"]) for s in result["skipped"]] == [
        (2, "invalid_event"),
        (3, "invalid_event"),
        (5, "invalid_event"),
        (6, "bant_incomplete"),
    ]
    assert "spaceships" in result["skipped"][1]["message"] and "custom_attr" in result["skipped"][2]["message"]
    signals = await _signals(app)
    assert [(s.category, s.intent_level, s.source_status) for s in signals] == [
        ("switching_intent", "hot", "available"),
        ("tech_install", "cold", "fcra_blocked"),
        ("tech_install", "cold", "available"),
    ]
    assert signals[2].evidence == {"technology": "okta", "internal_note": "kept"}  # unknown keys kept
    again = vpx(database_url, "signals", "ingest", str(path))
    assert (again["ingested"], again["duplicates"]) == (0, 3)


async def test_cli_missing_file_is_a_json_error(app: FastAPI, database_url: str, tmp_path: Path) -> None:
    result = vpx(database_url, "signals", "ingest", str(tmp_path / "nope.jsonl"), check=False)
    assert result["error"]["code"] == "invalid_parameters"


@pytest.fixture
async def admin_app(database_url: str, clock: FixedClock) -> AsyncIterator[FastAPI]:
    application = create_app(test_settings(database_url, admin_token=TOKEN), clock=clock)
    await wipe(application.state.database)
    yield application
    await application.state.database.dispose()


URL = "/api/v1/admin/signals"


async def test_admin_api_ingests_an_array(admin_app: FastAPI) -> None:
    factory = Factory(admin_app, admin_app.state.clock)
    contact = await factory.contact()
    body = [
        _line(business=None, contact_id=contact, industry="home-services"),
        "not an object",
        _line(business=None, contact_id="ct_424242"),
        _line(contact_id=contact),  # both: refused
        _line(evidence={"interest": "crm"}, source_record_id="crm-1"),
    ]
    async with asgi_client(admin_app) as http:
        response = await http.post(URL, json=body, headers={"X-Admin-Token": TOKEN})
        assert response.status_code == 200, response.text
        result = response.json()
        assert (result["ingested"], result["contacts_linked"], result["contacts_created"]) == (2, 1, 1)
        assert [(s["index"], s["reason"]) for s in result["skipped"]] == [
            (1, "invalid_event"),
            (2, "unknown_contact"),
            (3, "invalid_event"),
        ]
        assert len(result["signal_ids"]) == 2
        again = (await http.post(URL, json=body[4:], headers={"X-Admin-Token": TOKEN})).json()
        assert (again["ingested"], again["duplicates"]) == (0, 1)


async def test_admin_api_needs_the_operator_token(admin_app: FastAPI) -> None:
    factory = Factory(admin_app, admin_app.state.clock)
    account = await factory.account()
    async with asgi_client(admin_app) as http:
        cases: list[tuple[dict[str, str], int, str]] = [
            ({}, 401, "invalid_admin_token"),
            ({"X-Admin-Token": "wrong"}, 403, "admin_forbidden"),
            ({"X-Admin-Token": TOKEN[:-1]}, 403, "admin_forbidden"),
            (account.headers("full"), 401, "invalid_admin_token"),  # a customer key is not the token
        ]
        for headers, status, code in cases:
            response = await http.post(URL, json=[_line()], headers=headers)
            assert response.status_code == status
            assert response.headers["content-type"] == "application/problem+json"
            assert response.json()["code"] == code
        assert await _signals(admin_app) == []


async def test_admin_api_is_off_without_a_configured_token(client: httpx.AsyncClient, app: FastAPI) -> None:
    response = await client.post(URL, json=[_line()], headers={"X-Admin-Token": "anything"})
    assert response.status_code == 403 and "VPX_ADMIN_TOKEN" in response.json()["detail"]
    assert await _signals(app) == []


async def test_admin_api_refuses_a_non_array_body(admin_app: FastAPI) -> None:
    async with asgi_client(admin_app) as http:
        response = await http.post(URL, json={"category": "x"}, headers={"X-Admin-Token": TOKEN})
        assert response.status_code == 422
        broken = await http.post(
            URL, content=b"[{", headers={"X-Admin-Token": TOKEN, "Content-Type": "application/json"}
        )
        assert broken.status_code == 400
