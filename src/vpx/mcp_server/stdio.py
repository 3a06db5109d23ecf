"""``vpx mcp``: the MCP server over stdio for a desktop assistant, calling a vpx API over HTTP with one
key (VPX_API_KEY at VPX_API_URL). The process is the session: its spending cap is VPX_MCP_MAX_CREDITS."""

from __future__ import annotations

from decimal import Decimal

import httpx
from mcp.server.stdio import stdio_server

from vpx import __version__
from vpx.auth.keys import parse_key
from vpx.mcp_server.api import ApiCaller
from vpx.mcp_server.server import Session, build_server
from vpx.mcp_server.spending import SessionBudget


async def serve_stdio(*, api_url: str, api_key: str, cap: Decimal) -> None:
    key_type = parse_key(api_key)
    if key_type is None:
        raise ValueError("VPX_API_KEY is not a vpx API key")
    async with httpx.AsyncClient(
        base_url=api_url.rstrip("/"), timeout=30, headers={"User-Agent": f"vpx-mcp/{__version__}"}
    ) as http:
        session = Session(ApiCaller(http, api_key=api_key), key_type, SessionBudget(cap))

        async def session_of(_ctx: object) -> Session:
            return session

        server = build_server(session_of)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
