"""Routing a test key's request to the sandbox before anything else runs: its prefix (``vpx_test_``)
says its mode without a database lookup, so every dependency of the request (its database sessions,
search, signal broker…) is the sandbox's from the start, whatever order they are resolved in."""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from vpx.auth.keys import is_test_key
from vpx.sandbox.world import Sandbox

API = "/api/v1/"
# Never the sandbox's: the operator's API, which takes no API key.
OPERATOR = "/api/v1/admin"
# The account's keys live in the main database, whatever the mode of the key that manages them.
ACCOUNT_LEVEL = ("/api/v1/keys",)


class TestModeRouting:
    """Marks a request made with a test key ``livemode: false`` and hands it the sandbox's parts."""

    __test__ = False  # not a test class, whatever its name

    def __init__(self, app: ASGIApp, *, sandbox: Sandbox | None) -> None:
        self.app = app
        self.sandbox = sandbox

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path: str = scope["path"]
            if path.startswith(API) and not path.startswith(OPERATOR):
                key = Headers(scope=scope).get("x-api-key", "").strip()
                if is_test_key(key):
                    state = scope.setdefault("state", {})
                    state["livemode"] = False
                    if self.sandbox is not None and not path.startswith(ACCOUNT_LEVEL):
                        state.update(self.sandbox.state)
        await self.app(scope, receive, send)
