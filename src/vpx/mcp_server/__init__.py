"""The MCP server: vpx's tools for assistants, over stdio (``vpx mcp``) and streamable HTTP (``/mcp``).

Named ``mcp_server`` beside the official ``mcp`` SDK it is built on. Every tool is a call of the API
itself with the caller's key (the same authentication, permissions, prices, idempotency and test
mode), its input schema generated from the API's own request models and its answer the API's JSON.
Spending tools take a required ``max_credits`` and refuse a price above it; a session's spending cap
(VPX_MCP_MAX_CREDITS) is never passed.
"""
