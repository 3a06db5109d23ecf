"""An httpx transport that asks the guard about each request's host before it is sent: the outbound
path of the clients that reach an API root the operator sets (enrichment providers, DROP). Those
clients follow no redirects, so every host they reach is checked.

The check resolves the name and judges every address; the request then goes out by name as httpx
sends it (one client reaches several providers, which may share a front end: a connection pinned to
one address would be reused across names). A refused host fails as an unreachable one does
(``httpx.ConnectError``), and a name that does not resolve in the request's connect time as a
connection that took too long (``httpx.ConnectTimeout``)."""

from __future__ import annotations

import asyncio

import httpx

from vpx.outbound.guard import TargetRefused, check_host
from vpx.outbound.resolver import Resolver, system_resolver


class CheckedTransport(httpx.AsyncBaseTransport):
    """Sends through ``inner`` (httpx's own transport by default) once the guard allows the host."""

    def __init__(
        self,
        inner: httpx.AsyncBaseTransport | None = None,
        *,
        allow_private: bool,
        resolver: Resolver = system_resolver,
    ) -> None:
        self.inner = inner if inner is not None else httpx.AsyncHTTPTransport()
        self.allow_private = allow_private
        self.resolver = resolver

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        port = url.port or (443 if url.scheme == "https" else 80)
        connect = (request.extensions.get("timeout") or {}).get("connect")
        try:
            async with asyncio.timeout(connect):
                await check_host(url.host, port, allow_private=self.allow_private, resolver=self.resolver)
        except TimeoutError:
            raise httpx.ConnectTimeout(f"host {url.host} did not resolve in time", request=request) from None
        except TargetRefused as exc:
            raise httpx.ConnectError(str(exc), request=request) from None
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()
