"""The API as the tools call it: one request with the caller's key, its answer as JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import httpx


@dataclass(frozen=True)
class ApiAnswer:
    status: int
    body: Any
    charged: Decimal

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class ApiCaller:
    """Requests to the vpx API with one key: over the network (``vpx mcp``) or in process (``/mcp``)."""

    def __init__(self, http: httpx.AsyncClient, *, api_key: str) -> None:
        self.http = http
        self.api_key = api_key

    async def call(
        self, method: str, path: str, *, json_body: Any = None, params: dict[str, Any] | None = None
    ) -> ApiAnswer:
        response = await self.http.request(
            method,
            path,
            json=json_body,
            params={k: v for k, v in (params or {}).items() if v is not None},
            headers={"X-API-Key": self.api_key},
        )
        try:
            body = response.json()
        except json.JSONDecodeError:
            body = {"detail": response.text[:500], "status": response.status_code}
        try:
            charged = Decimal(response.headers.get("X-Credits-Charged", "0"))
        except InvalidOperation:
            charged = Decimal(0)
        return ApiAnswer(status=response.status_code, body=body, charged=charged)
