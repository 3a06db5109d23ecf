"""Request fields that trim spaces around a value hold to the document's maxLength for the value as
sent, spaces included: a value over the length is a 422 naming the field, even when it fits once
trimmed. Within the length, the spaces are still trimmed."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from typing import Any

import httpx
from pydantic import BaseModel

import vpx
from tests.factories import Factory
from vpx.fields import TrimmedModel

RULES = "/api/v1/buyer/auto-buy/rules"
RULE = {"industries": ["home-services"], "states": ["CO"], "min_confidence": 0.5}


def padded(length: int) -> str:
    """``length`` characters as sent, ``length - 2`` once trimmed."""
    return " " + "a" * (length - 2) + " "


def refused_field(response: httpx.Response) -> str:
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["code"] == "invalid_parameters"
    fields = [e["field"] for e in problem["errors"]]
    assert len(fields) == 1, problem
    assert "at most" in problem["errors"][0]["message"], problem
    return fields[0]


async def test_a_value_over_the_length_with_spaces_is_refused_everywhere(
    client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    full = account.headers("full")
    cases: list[tuple[str, httpx.Response]] = [
        ("city", await client.get("/api/v1/contacts/search", params={"city": padded(121)}, headers=full)),
        ("city", await client.post("/api/v1/contacts/search", json={"city": padded(121)}, headers=full)),
        ("q", await client.post("/api/v1/contacts/search", json={"q": padded(201)}, headers=full)),
        ("city", await client.get("/api/v1/exports/contacts.csv", params={"city": padded(121)}, headers=full)),
        ("cursor", await client.get("/api/v1/signals", params={"cursor": padded(201)}, headers=full)),
        ("name", await client.post(RULES, json={**RULE, "name": padded(201)}, headers=full)),
        (
            "description",
            await client.post(
                "/api/v1/webhooks",
                json={"url": "https://hooks.example/vpx", "events": ["signal.created"], "description": padded(201)},
                headers=full,
            ),
        ),
        (
            "url",
            await client.post(
                "/api/v1/webhooks",
                json={"url": " https://hooks.example/" + "a" * 2025 + " ", "events": ["signal.created"]},
                headers=full,
            ),
        ),
        (
            "contact_ids[0]",
            await client.post("/api/v1/contacts/batch-reveal", json={"contact_ids": [padded(41)]}, headers=full),
        ),
    ]
    created = await client.post(RULES, json={**RULE, "name": "Rule"}, headers=full)
    assert created.status_code == 201, created.text
    changed = await client.patch(f"{RULES}/{created.json()['id']}", json={"name": padded(201)}, headers=full)
    cases.append(("name", changed))
    assert [(field, refused_field(response)) for field, response in cases] == [(f, f) for f, _ in cases]
    shown = await client.get(f"{RULES}/{created.json()['id']}", headers=full)
    assert shown.json()["name"] == "Rule"  # the refused change changed nothing


async def test_within_the_length_spaces_are_still_trimmed(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    full = account.headers("full")
    created = await client.post(RULES, json={**RULE, "name": padded(200)}, headers=full)
    assert created.status_code == 201, created.text
    assert created.json()["name"] == "a" * 198
    found = await client.get("/api/v1/contacts/search", params={"city": padded(120)}, headers=full)
    assert found.status_code == 200, found.text


def _models() -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    for module_info in pkgutil.walk_packages(vpx.__path__, "vpx."):
        if ".migrations" in module_info.name:
            continue
        module = importlib.import_module(module_info.name)
        found += [
            value
            for value in vars(module).values()
            if inspect.isclass(value) and issubclass(value, BaseModel) and value.__module__ == module.__name__
        ]
    return found


def test_every_model_that_trims_checks_lengths_as_sent() -> None:
    trimming = [m for m in _models() if m.model_config.get("str_strip_whitespace")]
    assert trimming, "no model trims spaces: the test looks in the wrong place"
    unchecked: list[Any] = [f"{m.__module__}.{m.__name__}" for m in trimming if not issubclass(m, TrimmedModel)]
    assert unchecked == []
