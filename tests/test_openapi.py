"""D27: the OpenAPI document is generated, checked in, and describes every response the service sends."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tests.conftest import TEST_SECRET_KEY
from vpx.app import create_app
from vpx.config import Settings

CHECKED_IN = Path(__file__).resolve().parents[1] / "openapi.json"


def generated() -> dict[str, object]:
    document: dict[str, object] = create_app(
        Settings(database_url="sqlite+aiosqlite:///:memory:", secret_keys=TEST_SECRET_KEY)
    ).openapi()
    return json.loads(json.dumps(document))


def test_checked_in_document_matches_the_code() -> None:
    assert json.loads(CHECKED_IN.read_text()) == generated(), "openapi.json drifted: run `make openapi` and commit it"


def test_every_api_operation_documents_its_errors_as_problem_details() -> None:
    document = generated()
    paths = document["paths"]
    assert isinstance(paths, dict)
    for path, operations in paths.items():
        if not path.startswith("/api/v1/"):
            continue
        for method, operation in operations.items():
            responses = operation["responses"]
            if operation.get("security") == []:  # public (the privacy requests' form): no key to refuse
                assert "401" not in responses and "429" in responses, (method, path)
            else:
                assert "401" in responses and "403" in responses and "429" in responses, (method, path)
            for status, response in responses.items():
                if status.startswith(("4", "5")):
                    assert "application/problem+json" in response["content"], (method, path, status)
    schemas = document["components"]["schemas"]  # type: ignore[index]
    assert set(schemas["Problem"]["required"]) >= {"type", "title", "status", "detail", "code", "request_id"}
    assert "HTTPValidationError" not in schemas


async def test_served_document_is_the_checked_in_one(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response.json() == json.loads(CHECKED_IN.read_text())
