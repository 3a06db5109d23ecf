"""`AsyncClient`: the API's calls grouped as the API is, over one connection pool."""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import httpx

from vpx_client import _policy
from vpx_client._async._account import AsyncAccount
from vpx_client._async._autobuy import AsyncAutoBuy
from vpx_client._async._contacts import AsyncContacts
from vpx_client._async._exports import AsyncExports
from vpx_client._async._publisher import AsyncPublisher
from vpx_client._async._sequences import AsyncMailboxes, AsyncSequences
from vpx_client._async._signals import AsyncSignals
from vpx_client._async._suppressions import AsyncSuppressions
from vpx_client._async._transport import AUTO, AsyncTransport, IdempotencyKey, RawResponse
from vpx_client._async._visitors import AsyncVisitors
from vpx_client._async._webhooks import AsyncWebhooks
from vpx_client._meta import RateLimitState
from vpx_client._version import __version__

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
# A test key's prefix: its requests run against the server's sandbox, on a test balance.
TEST_KEY_PREFIX = "vpx_test_"


class AsyncClient:
    """A client for one API key. ``api_key`` and ``base_url`` default to the environment's
    ``VPX_API_KEY`` and ``VPX_API_URL`` (else http://127.0.0.1:8000). Retries follow ``max_retries``,
    ``backoff``, ``max_backoff`` and ``max_retry_wait`` (see docs/client.md); ``http_client`` or
    ``transport`` replace the connection (an in-process app, a proxy, custom TLS)."""

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
        max_retry_wait: float = 60.0,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        key = api_key or os.environ.get("VPX_API_KEY")
        if not key:
            raise ValueError("an API key is needed: pass api_key or set VPX_API_KEY")
        self._livemode = not key.strip().startswith(TEST_KEY_PREFIX)
        self._transport = AsyncTransport(
            api_key=key,
            base_url=base_url or os.environ.get("VPX_API_URL") or DEFAULT_BASE_URL,
            timeout=timeout,
            retry=_policy.RetryPolicy(
                max_retries=max_retries, backoff=backoff, max_backoff=max_backoff, max_wait=max_retry_wait
            ),
            http_client=http_client,
            transport=transport,
            headers=headers,
            user_agent=f"vpx-client/{__version__} python-httpx/{httpx.__version__}",
        )
        self.contacts = AsyncContacts(self._transport)
        self.signals = AsyncSignals(self._transport)
        self.autobuy = AsyncAutoBuy(self._transport)
        self.webhooks = AsyncWebhooks(self._transport)
        self.exports = AsyncExports(self._transport)
        self.account = AsyncAccount(self._transport)
        self.publisher = AsyncPublisher(self._transport)
        self.visitors = AsyncVisitors(self._transport)
        self.sequences = AsyncSequences(self._transport)
        self.mailboxes = AsyncMailboxes(self._transport)
        self.suppressions = AsyncSuppressions(self._transport)

    @property
    def base_url(self) -> str:
        return self._transport.base_url

    @property
    def livemode(self) -> bool:
        """False with a test key (``vpx_test_…``): every call sees the sandbox and spends the test balance."""
        return self._livemode

    @property
    def rate_limit(self) -> RateLimitState | None:
        """The key's request budget as the latest response described it."""
        return self._transport.rate_limit

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        idempotency_key: IdempotencyKey = AUTO,
    ) -> RawResponse:
        """Any call, with the same retries, idempotency keys and errors as the typed ones. ``path`` is
        relative to /api/v1. ``idempotency_key=None`` sends none: a spending call is then never retried."""
        return await self._transport.send(
            method.upper(),
            path,
            params=_policy.query(**params) if params else None,
            body=json,
            idempotency_key=idempotency_key,
        )

    async def aclose(self) -> None:
        await self._transport.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.aclose()
