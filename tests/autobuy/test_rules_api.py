"""The rules API (D24): create, list, get, update, pause, resume, delete; validation field by field
(422); Full Access only (403 naming the key type); another account's rules are 404."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.autobuy.support import PURCHASES, RULES, create_rule, rule_body
from tests.factories import Factory

pytestmark = pytest.mark.asyncio


async def test_create_get_list_update_and_delete(client: httpx.AsyncClient, factory: Factory) -> None:
    full = (await factory.account()).headers("full")
    rule = await create_rule(
        client, full, states=["co", "CA"], categories=["switching_intent"], budget_credits=30, daily_cap=20
    )
    assert rule["id"].startswith("abr_") and rule["status"] == "active" and rule["paused_reason"] is None
    assert rule["states"] == ["CO", "CA"] and rule["industries"] == ["home-services"]
    assert rule["budget_credits"] == 30 and rule["daily_cap"] == 20 and rule["budget_remaining"] == 30
    assert rule["spent_today"] == 0 and rule["spent_total"] == 0 and rule["purchases_today"] == 0
    assert rule["categories"] == ["switching_intent"] and rule["intent_levels"] is None
    got = await client.get(f"{RULES}/{rule['id']}", headers=full)
    assert got.status_code == 200 and got.json() == rule
    listed = await client.get(RULES, headers=full)
    assert [r["id"] for r in listed.json()["rules"]] == [rule["id"]]

    patched = await client.patch(
        f"{RULES}/{rule['id']}", json={"name": "CO only", "states": ["CO"], "daily_cap": None}, headers=full
    )
    assert patched.status_code == 200, patched.text
    body = patched.json()
    assert body["name"] == "CO only" and body["states"] == ["CO"] and body["daily_cap"] is None
    assert body["budget_credits"] == 30  # untouched fields stay

    deleted = await client.delete(f"{RULES}/{rule['id']}", headers=full)
    assert deleted.status_code == 204
    assert (await client.get(f"{RULES}/{rule['id']}", headers=full)).status_code == 404
    assert (await client.get(RULES, headers=full)).json()["rules"] == []
    assert (await client.post(f"{RULES}/{rule['id']}/resume", headers=full)).status_code == 404


async def test_pause_and_resume(client: httpx.AsyncClient, factory: Factory) -> None:
    full = (await factory.account()).headers("full")
    rule = await create_rule(client, full)
    paused = await client.post(f"{RULES}/{rule['id']}/pause", headers=full)
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    assert paused.json()["paused_reason"] == "paused by the account"
    resumed = await client.post(f"{RULES}/{rule['id']}/resume", headers=full)
    assert resumed.status_code == 200 and resumed.json()["status"] == "active"
    assert resumed.json()["paused_reason"] is None


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"industries": ["plumbing-ish"]}, "industries"),
        ({"industries": []}, "industries"),
        ({"states": ["ZZ"]}, "states"),
        ({"states": []}, "states"),
        ({"min_confidence": 1.5}, "min_confidence"),
        ({"min_confidence": -0.1}, "min_confidence"),
        ({"min_confidence": True}, "min_confidence"),
        ({"min_confidence": "0.5"}, "min_confidence"),
        ({"budget_credits": -1}, "budget_credits"),
        ({"budget_credits": 0}, "budget_credits"),
        ({"budget_credits": "5"}, "budget_credits"),
        ({"daily_cap": -5}, "daily_cap"),
        ({"daily_cap": 0}, "daily_cap"),
        ({"daily_cap": 2.5}, "daily_cap"),
        ({"categories": []}, "categories"),
        ({"categories": ["gossip"]}, "categories"),
        ({"intent_levels": []}, "intent_levels"),
        ({"intent_levels": ["scorching"]}, "intent_levels"),
        ({"name": "x" * 201}, "name"),
        ({"surprise": 1}, "surprise"),
    ],
)
async def test_invalid_rules_are_422_field_by_field(
    client: httpx.AsyncClient, factory: Factory, fields: dict[str, Any], field: str
) -> None:
    full = (await factory.account()).headers("full")
    response = await client.post(RULES, json=rule_body(**fields), headers=full)
    assert response.status_code == 422, response.text
    problem = response.json()
    assert response.headers["content-type"].startswith("application/problem+json")
    assert any(e["field"].split(".")[0].split("[")[0] == field for e in problem["errors"]), problem
    # Nothing was created.
    assert (await client.get(RULES, headers=full)).json()["rules"] == []


@pytest.mark.parametrize("missing", ["industries", "states", "min_confidence"])
async def test_required_fields(client: httpx.AsyncClient, factory: Factory, missing: str) -> None:
    full = (await factory.account()).headers("full")
    body = rule_body()
    del body[missing]
    response = await client.post(RULES, json=body, headers=full)
    assert response.status_code == 422 and any(e["field"] == missing for e in response.json()["errors"])


async def test_invalid_updates_change_nothing(client: httpx.AsyncClient, factory: Factory) -> None:
    full = (await factory.account()).headers("full")
    rule = await create_rule(client, full, budget_credits=30)
    for change in ({"industries": []}, {"states": ["XX"]}, {"budget_credits": -3}, {"min_confidence": 2}):
        response = await client.patch(f"{RULES}/{rule['id']}", json=change, headers=full)
        assert response.status_code == 422, (change, response.text)
    assert (await client.get(f"{RULES}/{rule['id']}", headers=full)).json() == rule
    # Null for a field a rule cannot be without leaves it as it is.
    kept = await client.patch(f"{RULES}/{rule['id']}", json={"industries": None, "states": None}, headers=full)
    assert kept.status_code == 200 and kept.json()["industries"] == rule["industries"]


@pytest.mark.parametrize("key_type", ["ro", "live"])
async def test_other_key_types_get_403_naming_full_access(
    client: httpx.AsyncClient, factory: Factory, key_type: str
) -> None:
    account = await factory.account()
    rule = await create_rule(client, account.headers("full"))
    headers = account.headers(key_type)
    for method, url in (
        ("POST", RULES),
        ("GET", RULES),
        ("GET", f"{RULES}/{rule['id']}"),
        ("PATCH", f"{RULES}/{rule['id']}"),
        ("DELETE", f"{RULES}/{rule['id']}"),
        ("POST", f"{RULES}/{rule['id']}/pause"),
        ("POST", f"{RULES}/{rule['id']}/resume"),
        ("GET", PURCHASES),
    ):
        response = await client.request(method, url, headers=headers, json=rule_body() if method != "GET" else None)
        assert response.status_code == 403, (method, url, response.text)
        assert "Full Access" in response.json()["detail"], response.json()


async def test_another_accounts_rules_are_not_found(client: httpx.AsyncClient, factory: Factory) -> None:
    owner = (await factory.account()).headers("full")
    other = (await factory.account()).headers("full")
    rule = await create_rule(client, owner)
    for method, url in (
        ("GET", f"{RULES}/{rule['id']}"),
        ("PATCH", f"{RULES}/{rule['id']}"),
        ("DELETE", f"{RULES}/{rule['id']}"),
        ("POST", f"{RULES}/{rule['id']}/pause"),
        ("POST", f"{RULES}/{rule['id']}/resume"),
    ):
        response = await client.request(
            method, url, headers=other, json={"name": "mine"} if method == "PATCH" else None
        )
        assert response.status_code == 404, (method, url, response.text)
    assert (await client.get(RULES, headers=other)).json()["rules"] == []
    assert (await client.get(f"{RULES}/{rule['id']}", headers=owner)).json()["status"] == "active"


async def test_purchases_query_validation(client: httpx.AsyncClient, factory: Factory) -> None:
    full = (await factory.account()).headers("full")
    for query in ("limit=0", "limit=101", "limit=abc", "cursor=nonsense"):
        response = await client.get(f"{PURCHASES}?{query}", headers=full)
        assert response.status_code == 422, (query, response.text)
    empty = await client.get(PURCHASES, headers=full)
    assert empty.status_code == 200 and empty.json() == {"purchases": [], "limit": 25, "next_cursor": None}


# --- How many rules, and their pages ---


async def test_an_account_has_at_most_the_cap_of_rules(client: httpx.AsyncClient, factory: Factory, app: Any) -> None:
    """Like webhooks, rules are capped per account (409 past it); a deleted rule frees its place, and
    another account's rules do not count."""
    from vpx.autobuy import service as rule_service

    cap = rule_service.MAX_RULES_PER_ACCOUNT
    assert cap == 100
    account, other = await factory.account(), await factory.account()
    full = account.headers("full")
    await _stored_rules(app, account.id, cap - 1)
    await _stored_rules(app, other.id, 3)
    last = await create_rule(client, full)
    refused = await client.post(RULES, json=rule_body(), headers=full)
    assert refused.status_code == 409, refused.text
    assert refused.json()["code"] == "conflict" and f"at most {cap} auto-buy rules" in refused.json()["detail"]
    assert len((await client.get(RULES, headers=full)).json()["rules"]) == cap  # the default page holds them all
    assert (await client.delete(f"{RULES}/{last['id']}", headers=full)).status_code == 204
    assert (await client.post(RULES, json=rule_body(), headers=full)).status_code == 201
    assert (await client.post(RULES, json=rule_body(), headers=other.headers("full"))).status_code == 201


async def test_rules_are_listed_in_pages(client: httpx.AsyncClient, factory: Factory) -> None:
    """`limit` and `cursor` as the ledger takes them, `next_cursor` in the answer beside `rules`; rules
    created in the same instant (the test clock's) still page by id, each once."""
    full = (await factory.account()).headers("full")
    made = [(await create_rule(client, full, name=f"rule {n}"))["id"] for n in range(5)]
    deleted = made.pop(2)
    assert (await client.delete(f"{RULES}/{deleted}", headers=full)).status_code == 204
    everything = (await client.get(RULES, headers=full)).json()
    assert everything["limit"] == 100 and everything["next_cursor"] is None
    assert [r["id"] for r in everything["rules"]] == sorted(made)
    seen: list[str] = []
    cursor = None
    for expected in (2, 2):
        query = "?limit=2" + (f"&cursor={cursor}" if cursor else "")
        page = (await client.get(RULES + query, headers=full)).json()
        assert page["limit"] == 2 and len(page["rules"]) == expected
        seen += [r["id"] for r in page["rules"]]
        cursor = page["next_cursor"]
    assert cursor is None and seen == [r["id"] for r in everything["rules"]]


async def test_rules_query_validation(client: httpx.AsyncClient, factory: Factory, app: Any) -> None:
    full = (await factory.account()).headers("full")
    await create_rule(client, full)
    await create_rule(client, full)
    purchases_cursor = "YWJwOjE"  # "abp:1": a purchases page's cursor is no rules cursor
    for query in ("limit=0", "limit=101", "limit=abc", "cursor=nonsense", f"cursor={purchases_cursor}"):
        response = await client.get(f"{RULES}?{query}", headers=full)
        assert response.status_code == 422, (query, response.text)
    first = (await client.get(f"{RULES}?limit=1", headers=full)).json()
    other = (await factory.account()).headers("full")
    # Another account's cursor shows nothing of the first account's rules.
    assert (await client.get(f"{RULES}?cursor={first['next_cursor']}", headers=other)).json()["rules"] == []


async def _stored_rules(app: Any, account_id: str, count: int) -> None:
    """``count`` rules of the account written directly (as many through the API would be slow)."""
    from decimal import Decimal

    from vpx.ids import new_id
    from vpx.models import AutoBuyRule

    now = app.state.clock.now()
    async with app.state.database.write_sessions() as session, session.begin():
        session.add_all(
            AutoBuyRule(
                id=new_id("abr"),
                account_id=account_id,
                name="",
                industries=["home-services"],
                states=["CO"],
                min_confidence=0.0,
                categories=[],
                intent_levels=[],
                budget_credits=None,
                daily_cap=None,
                status="active",
                paused_reason=None,
                spent_total=Decimal(0),
                purchases_total=0,
                spent_day=None,
                spent_today=Decimal(0),
                purchases_today=0,
                created_at=now,
                updated_at=now,
            )
            for _ in range(count)
        )
