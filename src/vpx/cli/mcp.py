"""`vpx mcp`: the MCP server over stdio, for a desktop assistant (docs/mcp.md)."""

from __future__ import annotations

import asyncio
import os
from decimal import Decimal, InvalidOperation

import typer

from vpx.cli.output import fail


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp)


def mcp() -> None:
    """Serve vpx's tools to an assistant over stdio (the Model Context Protocol), calling the API at
    VPX_API_URL (default http://127.0.0.1:8000) with the key in VPX_API_KEY. Spending tools need a
    max_credits; VPX_MCP_MAX_CREDITS caps what the session may spend (0: no cap of its own). A test key
    (vpx_test_…) works against the sandbox and a test balance."""
    from vpx.auth.keys import parse_key
    from vpx.mcp_server.stdio import serve_stdio

    key = os.environ.get("VPX_API_KEY", "").strip()
    if not key:
        fail("VPX_API_KEY is not set: give the MCP server an API key", as_json=False, code="invalid_parameters")
    if parse_key(key) is None:
        fail(
            "VPX_API_KEY is not a vpx API key (vpx_ro_…, vpx_live_…, vpx_full_… or a test key)",
            as_json=False,
            code="invalid_parameters",
        )
    url = os.environ.get("VPX_API_URL", "").strip() or "http://127.0.0.1:8000"
    raw_cap = os.environ.get("VPX_MCP_MAX_CREDITS", "").strip() or "0"
    try:
        cap = Decimal(raw_cap)
    except InvalidOperation:
        cap = Decimal(-1)
    if not cap.is_finite() or cap < 0:
        fail("VPX_MCP_MAX_CREDITS must be a number of credits, 0 or more", as_json=False, code="invalid_parameters")
    asyncio.run(serve_stdio(api_url=url, api_key=key, cap=cap))
