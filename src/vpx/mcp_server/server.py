"""The MCP server itself (the SDK's low-level server): the tools a key may use, and their calls."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from pydantic import ValidationError

from vpx import __version__
from vpx.auth.keys import KeyType
from vpx.mcp_server.api import ApiCaller
from vpx.mcp_server.spending import SessionBudget
from vpx.mcp_server.tools import BY_NAME, TOOLS, ToolRefused
from vpx.validation_messages import error_message

log = logging.getLogger("vpx.mcp")

INSTRUCTIONS = (
    "vpx: contacts from government registries and buyer-intent signals. Searching, previews and signals are "
    "free; reveal_contact and purchase_signal spend credits and need max_credits, the most a call may spend. "
    "With a test key (vpx_test_…) everything runs against a synthetic sandbox and a test balance."
)


@dataclass
class Session:
    """What the tools of one MCP session use: the API with the session's key, its key type, its budget."""

    api: ApiCaller
    key_type: KeyType
    budget: SessionBudget


SessionOf = Callable[[ServerRequestContext[Any, Any]], Awaitable[Session]]


def build_server(session_of: SessionOf) -> Server[Any]:
    """The server; ``session_of`` finds the session a request belongs to (its key, API and budget)."""

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        session = await session_of(ctx)
        return types.ListToolsResult(
            tools=[
                types.Tool(name=tool.name, description=tool.description, input_schema=tool.input_schema())
                for tool in TOOLS
                if tool.offered_to(session.key_type)
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        session = await session_of(ctx)
        tool = BY_NAME.get(params.name)
        if tool is None or not tool.offered_to(session.key_type):
            return _refusal(f"There is no tool {params.name!r} for this key.")
        arguments = dict(params.arguments or {})
        try:
            tool.arguments.model_validate(arguments)
        except ValidationError as exc:
            words = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {error_message(e)}" for e in exc.errors()
            )
            return _refusal(f"Invalid arguments: {words}")
        try:
            answer = await tool.handler(session.api, session.budget, arguments)
        except ToolRefused as exc:
            return _refusal(str(exc))
        text = json.dumps(answer.body, ensure_ascii=False)
        structured = answer.body if isinstance(answer.body, dict) else {"result": answer.body}
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=structured,
            is_error=not answer.ok,
        )

    return Server(
        "vpx",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _refusal(words: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=words)], is_error=True)
