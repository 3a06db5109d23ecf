# Generated from the async client by clients/python/scripts/unasync.py. Do not edit: regenerate.
"""Sending one API call: headers, the idempotency key, retries with backoff, errors, metadata."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import httpx

from vpx_client import _policy
from vpx_client._io import sync_sleep
from vpx_client._meta import ApiModel, RateLimitState, ResponseMeta, RetryRecord, attach
from vpx_client.errors import ConnectionFailed, error_for

log = logging.getLogger("vpx_client")

M = TypeVar("M", bound=ApiModel)


class _Auto:
    def __repr__(self) -> str:
        return "AUTO"


AUTO: Final = _Auto()
"""Idempotency key: one is made for every POST that spends or creates (see _policy)."""

IdempotencyKey = str | None | _Auto


@dataclass(frozen=True)
class RawResponse:
    response: httpx.Response
    meta: ResponseMeta


class Transport:
    """Owns the HTTP connection pool; sends calls with the retry policy and raises typed errors."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str,
        timeout: float,
        retry: _policy.RetryPolicy,
        http_client: httpx.Client | None,
        transport: httpx.BaseTransport | None,
        headers: Mapping[str, str] | None,
        user_agent: str,
    ) -> None:
        self.base_url = _policy.base_url_of(base_url)
        self.retry = retry
        self.rate_limit: RateLimitState | None = None
        self._headers = {"X-API-Key": api_key, "User-Agent": user_agent, **(headers or {})}
        self._owns_http = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout, transport=transport)
        self._rng = random.Random()

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def url(self, path: str) -> str:
        return self.base_url + path

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None,
        content: bytes | None,
        headers: Mapping[str, str],
        timeout: httpx.Timeout | None = None,
    ) -> httpx.Request:
        extensions = {"timeout": timeout.as_dict()} if timeout is not None else None
        return self._http.build_request(
            method,
            self.url(path),
            params=params,
            content=content,
            headers={**self._headers, **headers},
            extensions=extensions,
        )

    def _plan(
        self,
        method: str,
        path: str,
        body: Any,
        raw: tuple[bytes, str] | None,
        idempotency_key: IdempotencyKey,
        accept: str,
    ) -> tuple[bytes | None, dict[str, str], str | None, bool]:
        content = _policy.json_body(body) if body is not None else raw[0] if raw is not None else None
        key: str | None
        if isinstance(idempotency_key, _Auto):
            key = _policy.new_idempotency_key() if _policy.takes_idempotency_key(method, path) else None
        else:
            key = idempotency_key
        headers = {"Accept": accept, "X-Request-Id": _policy.new_request_id()}
        if content is not None:
            headers["Content-Type"] = raw[1] if raw is not None and body is None else "application/json"
        if key is not None:
            headers["Idempotency-Key"] = key
        return content, headers, key, _policy.is_spending(method, path)

    def send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        raw: tuple[bytes, str] | None = None,
        idempotency_key: IdempotencyKey = AUTO,
        headers: Mapping[str, str] | None = None,
        stream: bool = False,
        accept: str = "application/json",
        timeouts: httpx.Timeout | None = None,
    ) -> RawResponse:
        """Sends the call, again when the policy allows, and returns the first answer that is not
        retried. Error answers raise; with ``stream`` the body is left unread (close it). ``body`` is
        sent as JSON, ``raw`` as (bytes, content type)."""
        content, planned, key, spending = self._plan(method, path, body, raw, idempotency_key, accept)
        headers = {**planned, **(headers or {})}
        retries: list[RetryRecord] = []
        attempt = 0
        while True:
            attempt += 1
            request = self._request(method, path, params=params, content=content, headers=headers, timeout=timeouts)
            try:
                response = self._http.send(request, stream=stream)
            except httpx.TransportError as exc:
                sendable = isinstance(exc, _policy.NOT_SENT) and not (spending and key is None)
                if attempt > self.retry.max_retries or not (
                    sendable or _policy.may_send_again(method, spending=spending, idempotency_key=key)
                ):
                    meta = ResponseMeta(idempotency_key=key, retries=tuple(retries))
                    raise ConnectionFailed(f"{method} {path}: {type(exc).__name__}: {exc}", meta=meta) from exc
                delay = self.retry.backoff_delay(attempt, self._rng)
                retries.append(RetryRecord(attempt=attempt, reason=type(exc).__name__, delay_seconds=delay))
                log.info("vpx %s %s: %s; again in %.2f s", method, path, type(exc).__name__, delay)
                sync_sleep(delay)
                continue
            if response.status_code >= 400 and stream:
                response.read()
            meta = ResponseMeta.from_headers(
                response.status_code, response.headers, idempotency_key=key, retries=tuple(retries)
            )
            if meta.rate_limit is not None:
                self.rate_limit = meta.rate_limit
            reason = _policy.retry_reason(method, response, spending=spending, idempotency_key=key)
            if reason is not None and attempt <= self.retry.max_retries:
                asked = _policy.server_wait(response, now=time.time())
                if asked is None or asked <= self.retry.max_wait:
                    delay = (
                        self.retry.server_delay(asked, self._rng)
                        if asked is not None
                        else self.retry.backoff_delay(attempt, self._rng)
                    )
                    retries.append(RetryRecord(attempt=attempt, reason=reason, delay_seconds=delay, retry_after=asked))
                    log.info("vpx %s %s: %s; again in %.2f s", method, path, reason, delay)
                    response.close()
                    sync_sleep(delay)
                    continue
            if response.status_code >= 400:
                raise error_for(response.status_code, response.content, meta)
            return RawResponse(response=response, meta=meta)

    def call(
        self,
        method: str,
        path: str,
        into: type[M],
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        idempotency_key: IdempotencyKey = AUTO,
    ) -> M:
        """Sends the call and reads the answer as ``into``, with the answer's metadata attached."""
        answer = self.send(method, path, params=params, body=body, idempotency_key=idempotency_key)
        return parsed(answer, into.model_validate_json)

    def call_empty(self, method: str, path: str, *, body: Any = None) -> ResponseMeta:
        """A call whose answer has no body (204): its metadata."""
        answer = self.send(method, path, body=body)
        return answer.meta


def parsed(answer: RawResponse, parse: Callable[[bytes], M]) -> M:
    model = parse(answer.response.content)
    attach(model, answer.meta)
    return model
