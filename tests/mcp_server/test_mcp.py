"""The MCP server through the official `mcp` client, over stdio (`vpx mcp`) and streamable HTTP (`/mcp`),
in test mode and live mode: the tools a key gets, the API's JSON as answers, max_credits and the cap."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from fastapi import FastAPI
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent

from tests import factories
from tests.factories import Factory, details
from tests.sandbox.conftest import test_keys

VPX = str(Path(sys.executable).with_name("vpx"))
READ_TOOLS = {"search_contacts", "get_contact", "list_signals", "account_balance"}
ALL_TOOLS = READ_TOOLS | {"reveal_contact", "purchase_signal", "report_wrong_data"}


@asynccontextmanager
async def connect(transport: str, url: str, key: str, *, cap: str = "0") -> AsyncIterator[Client]:
    if transport == "stdio":
        env = {**os.environ, "VPX_API_KEY": key, "VPX_API_URL": url, "VPX_MCP_MAX_CREDITS": cap}
        server: Any = StdioServerParameters(command=VPX, args=["mcp"], env=env)
    else:
        server = streamable_http_client(f"{url}/mcp", http_client=httpx2.AsyncClient(headers={"X-API-Key": key}))
    async with Client(server) as client:
        yield client


def text(result: Any) -> str:
    assert result.content, result
    first = result.content[0]
    assert isinstance(first, TextContent), first
    return first.text


def answer(result: Any) -> Any:
    return json.loads(text(result))


async def keys_for(mode: str, client: httpx.AsyncClient, account: factories.TestAccount) -> dict[str, str]:
    return await test_keys(client, account) if mode == "test" else account.keys


async def a_contact(mode: str, factory: Factory) -> str:
    """A contact to reveal: the sandbox's first (the demo's ct_1) in test mode, a real one in live mode."""
    if mode == "test":
        return "ct_1"
    return await factory.contact(business_name="Mcp Plumbing Co", **details(4242))


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode", ["test", "live"])
async def test_tools_answer_with_the_apis_json_and_spend_within_max_credits(
    transport: str, mode: str, served: str, client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account(credits=20)
    keys = await keys_for(mode, client, account)
    contact_id = await a_contact(mode, factory)
    async with connect(transport, served, keys["ro"]) as mcp:
        assert {tool.name for tool in (await mcp.list_tools()).tools} == READ_TOOLS
        refused = await mcp.call_tool("reveal_contact", {"contact_id": contact_id, "max_credits": 10})
        assert refused.is_error
    async with connect(transport, served, keys["live"]) as mcp:
        tools = {tool.name: tool for tool in (await mcp.list_tools()).tools}
        assert set(tools) == ALL_TOOLS
        assert "max_credits" in tools["reveal_contact"].input_schema["required"]
        balance = answer(await mcp.call_tool("account_balance", {}))
        assert balance["livemode"] is (mode == "live")
        preview = answer(await mcp.call_tool("get_contact", {"contact_id": contact_id}))
        api_preview = (await client.get(f"/api/v1/contacts/{contact_id}", headers={"X-API-Key": keys["live"]})).json()
        assert preview == api_preview and preview["preview"] is True
        price = Decimal(str(preview["reveal_cost"]))
        too_little = await mcp.call_tool("reveal_contact", {"contact_id": contact_id, "max_credits": 0})
        assert too_little.is_error
        assert f"costs {price.normalize():f} credits" in text(too_little)
        assert answer(await mcp.call_tool("account_balance", {}))["balance"] == balance["balance"]
        revealed = await mcp.call_tool("reveal_contact", {"contact_id": contact_id, "max_credits": float(price)})
        assert not revealed.is_error, revealed.content
        body = answer(revealed)
        assert body["preview"] is False and Decimal(str(body["credits_charged"])) == price
        again = answer(await mcp.call_tool("reveal_contact", {"contact_id": contact_id, "max_credits": 0}))
        assert again["credits_charged"] == 0
        found = answer(await mcp.call_tool("search_contacts", {"query": "plumbing"}))
        assert "interpreted" in found and found["total"] >= 1
        signals = answer(await mcp.call_tool("list_signals", {"limit": 5}))
        assert "signals" in signals
    live = (await client.get("/api/v1/account", headers=account.headers("ro"))).json()["balance"]
    if mode == "test":
        assert Decimal(str(live["total"])) == Decimal(45)  # 25 free + 20 granted: the real balance untouched
    else:
        assert Decimal(str(live["total"])) == Decimal(45) - price


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_sessions_cap_is_never_passed(
    transport: str, app: FastAPI, served: str, client: httpx.AsyncClient, factory: Factory
) -> None:
    app.state.settings.mcp_max_credits = Decimal(2)  # the server's cap for /mcp sessions
    account = await factory.account()
    keys = await test_keys(client, account)
    test = {"X-API-Key": keys["live"]}
    previews = (await client.get("/api/v1/contacts/search", params={"q": "dental", "limit": 50}, headers=test)).json()
    cheap = [c["id"] for c in previews["contacts"] if Decimal(str(c["reveal_cost"])) == 1][:3]
    assert len(cheap) == 3
    async with connect(transport, served, keys["live"], cap="2") as mcp:
        for contact_id in cheap[:2]:
            done = await mcp.call_tool("reveal_contact", {"contact_id": contact_id, "max_credits": 5})
            assert not done.is_error, done.content
        third = await mcp.call_tool("reveal_contact", {"contact_id": cheap[2], "max_credits": 5})
        assert third.is_error and "cap is 2" in text(third)
    after = (await client.get(f"/api/v1/contacts/{cheap[2]}", headers=test)).json()
    assert after["preview"] is True


async def test_the_http_transport_refuses_a_request_without_a_good_key(served: str) -> None:
    async with httpx.AsyncClient() as http:
        missing = await http.post(f"{served}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert missing.status_code == 401 and missing.json()["code"] == "invalid_api_key"
        unknown = await http.post(f"{served}/mcp", json={}, headers={"X-API-Key": "vpx_test_ro_" + "A" * 38})
        assert unknown.status_code == 401


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_purchase_and_report_tools_keep_the_same_rules(
    transport: str, served: str, client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    keys = await test_keys(client, account)
    test = {"X-API-Key": keys["live"]}
    signals = (await client.get("/api/v1/signals", params={"limit": 50}, headers=test)).json()["signals"]
    signal = next(s for s in signals if Decimal(str(s["reveal_cost"])) > 0)
    price = Decimal(str(signal["reveal_cost"]))
    before = Decimal(str((await client.get("/api/v1/account", headers=test)).json()["balance"]["total"]))
    async with connect(transport, served, keys["live"]) as mcp:
        too_little = await mcp.call_tool("purchase_signal", {"signal_id": signal["id"], "max_credits": 0})
        assert too_little.is_error and f"costs {price.normalize():f} credits" in text(too_little)
        missing = await mcp.call_tool("purchase_signal", {"signal_id": signal["id"]})
        assert missing.is_error and "max_credits" in text(missing)
        bought = await mcp.call_tool("purchase_signal", {"signal_id": signal["id"], "max_credits": float(price)})
        assert not bought.is_error, bought.content
        contact_id = signal["contact"]["id"]
        report = {"contact_id": contact_id, "field": "phone", "problem": "disconnected"}
        reported = await mcp.call_tool("report_wrong_data", report)
        assert not reported.is_error, reported.content
        shown = answer(reported)
        assert shown["contact_id"] == contact_id and (shown["field"], shown["problem"]) == ("phone", "disconnected")
        unknown = await mcp.call_tool("get_contact", {"contact_id": "ct_999999"})
        assert unknown.is_error and answer(unknown)["status"] == 404
    after = Decimal(str((await client.get("/api/v1/account", headers=test)).json()["balance"]["total"]))
    assert after == before - price
