"""The streamable HTTP transport at ``/mcp``, on the server itself, authenticated by the API's keys.

Each request carries a key (``X-API-Key``, or ``Authorization: Bearer <key>``); an MCP session belongs
to the key that opened it, and its tool calls go through the API in process with that key and the
caller's address (its allow-list, rate limit and test mode apply as to any request). The spending cap
is per session, so ``/mcp`` serves the protocol revisions that have sessions (the initialize
handshake); a client that offers a newer, session-less revision is told which it may use, and the
SDK's clients fall back to the handshake on their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import OrderedDict
from typing import Any

import httpx
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from vpx.auth import network
from vpx.auth import service as key_service
from vpx.auth.keys import hash_key, parse_key
from vpx.mcp_server.api import ApiCaller
from vpx.mcp_server.server import Session, build_server
from vpx.mcp_server.spending import SessionBudget

PATH = "/mcp"
SESSION_HEADER = "mcp-session-id"
MAX_SESSIONS = 10_000
UNSUPPORTED_PROTOCOL_VERSION = -32022


def key_of(headers: Headers) -> str:
    key = headers.get("x-api-key", "").strip()
    if not key:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        key = token.strip() if scheme.lower() == "bearer" else ""
    return key


class McpEndpoint:
    """The ASGI app mounted at ``/mcp``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app  # the API the tools call, in process
        self.server = build_server(self._session_of)
        self.manager: StreamableHTTPSessionManager | None = None
        self.sessions: OrderedDict[str, tuple[str, Session]] = OrderedDict()
        self._running: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._start_lock = asyncio.Lock()

    async def _ensure_running(self) -> StreamableHTTPSessionManager:
        """The SDK's session manager runs in a task of its own from the first request to ``stop()``."""
        async with self._start_lock:
            if self.manager is None:
                manager = StreamableHTTPSessionManager(self.server, json_response=True, stateless=False)
                started = asyncio.Event()

                async def run() -> None:
                    async with manager.run():
                        started.set()
                        await self._stop.wait()

                self._running = asyncio.create_task(run(), name="vpx mcp sessions")
                await started.wait()
                self.manager = manager
            return self.manager

    async def stop(self) -> None:
        self._stop.set()
        if self._running is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._running, timeout=5)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = Headers(scope=scope)
        key = key_of(headers)
        refused = await self._refusal(scope, key)
        if refused is not None:
            status, code, detail = refused
            await _problem(send, status, code, detail)
            return
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            await _unsupported_version(scope, receive, send, version)
            return
        session_id = headers.get(SESSION_HEADER)
        if session_id is not None and session_id in self.sessions and self.sessions[session_id][0] != hash_key(key):
            await _problem(send, 404, "not_found", "No such MCP session for this key.")
            return
        manager = await self._ensure_running()
        await manager.handle_request(scope, receive, send)
        if scope.get("method") == "DELETE" and session_id is not None:
            self.sessions.pop(session_id, None)

    async def _refusal(self, scope: Scope, key: str) -> tuple[int, str, str] | None:
        """Why the request may not go on (status, code, words), as the API refuses a key; None if it may."""
        if not key:
            return 401, "invalid_api_key", "Send an API key in the X-API-Key header (or Authorization: Bearer)."
        if parse_key(key) is None:
            return 401, "invalid_api_key", "The API key is malformed."
        state = scope["app"].state
        known = await key_service.find_key(state.database, secret=key)
        if known is None or known.revoked:
            return 401, "invalid_api_key", "The API key is not recognised or has been revoked."
        if known.account_status != "active":
            return 403, "account_suspended", "The account is suspended."
        return None

    async def _session_of(self, ctx: ServerRequestContext[Any, Any]) -> Session:
        """The MCP session's key, API and budget, made at its first tool request."""
        request = ctx.request
        assert isinstance(request, Request)
        key = key_of(request.headers)
        session_id = request.headers.get(SESSION_HEADER)
        if session_id is not None and session_id in self.sessions:
            self.sessions.move_to_end(session_id)
            return self.sessions[session_id][1]
        state = request.app.state
        address = network.client_address(
            request.client.host if request.client else None,
            request.headers.get("x-forwarded-for"),
            state.trusted_proxies,
        )
        transport = httpx.ASGITransport(app=self.app, client=(address or "127.0.0.1", 0))
        http = httpx.AsyncClient(transport=transport, base_url="http://vpx.mcp")
        key_type = parse_key(key)
        assert key_type is not None  # checked before the request reached the SDK
        session = Session(ApiCaller(http, api_key=key), key_type, SessionBudget(state.settings.mcp_max_credits))
        if session_id is not None:
            self.sessions[session_id] = (hash_key(key), session)
            while len(self.sessions) > MAX_SESSIONS:
                self.sessions.popitem(last=False)
        return session


async def _problem(send: Send, status: int, code: str, detail: str) -> None:
    titles = {401: "Invalid API key", 403: "Account suspended", 404: "Not found"}
    body = json.dumps(
        {
            "type": f"urn:vpx:problem:{code}",
            "title": titles.get(status, "Refused"),
            "status": status,
            "detail": detail,
            "code": code,
        }
    ).encode()
    headers = [(b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'ApiKey header="X-API-Key"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _unsupported_version(scope: Scope, receive: Receive, send: Send, version: str) -> None:
    """The JSON-RPC error of a protocol revision this endpoint does not serve, naming those it does."""
    request = Request(scope, receive)
    try:
        message = json.loads(await request.body())
        request_id = message.get("id") if isinstance(message, dict) else None
    except ValueError:
        request_id = None
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {
                "code": UNSUPPORTED_PROTOCOL_VERSION,
                "message": "Unsupported protocol version",
                "data": {"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": version},
            },
        }
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": body})
