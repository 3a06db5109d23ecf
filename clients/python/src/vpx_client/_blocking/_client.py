# Generated from the async client by clients/python/scripts/unasync.py. Do not edit: regenerate.
"""`Client`: the API's calls grouped as the API is, over one connection pool."""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import TracebackType
from typing import Any

import httpx

from vpx_client import _policy
from vpx_client._blocking._account import Account
from vpx_client._blocking._autobuy import AutoBuy
from vpx_client._blocking._contacts import Contacts
from vpx_client._blocking._exports import Exports
from vpx_client._blocking._publisher import Publisher
from vpx_client._blocking._sequences import Mailboxes, Sequences
from vpx_client._blocking._signals import Signals
from vpx_client._blocking._suppressions import Suppressions
from vpx_client._blocking._transport import AUTO, IdempotencyKey, RawResponse, Transport
from vpx_client._blocking._visitors import Visitors
from vpx_client._blocking._webhooks import Webhooks
from vpx_client._meta import RateLimitState
from vpx_client._version import __version__

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
# A test key's prefix: its requests run against the server's sandbox, on a test balance.
TEST_KEY_PREFIX = "vpx_test_"


class Client:
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
        http_client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        key = api_key or os.environ.get("VPX_API_KEY")
        if not key:
            raise ValueError("an API key is needed: pass api_key or set VPX_API_KEY")
        self._livemode = not key.strip().startswith(TEST_KEY_PREFIX)
        self._transport = Transport(
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
        self.contacts = Contacts(self._transport)
        self.signals = Signals(self._transport)
        self.autobuy = AutoBuy(self._transport)
        self.webhooks = Webhooks(self._transport)
        self.exports = Exports(self._transport)
        self.account = Account(self._transport)
        self.publisher = Publisher(self._transport)
        self.visitors = Visitors(self._transport)
        self.sequences = Sequences(self._transport)
        self.mailboxes = Mailboxes(self._transport)
        self.suppressions = Suppressions(self._transport)

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

    def request(
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
        return self._transport.send(
            method.upper(),
            path,
            params=_policy.query(**params) if params else None,
            body=json,
            idempotency_key=idempotency_key,
        )

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
