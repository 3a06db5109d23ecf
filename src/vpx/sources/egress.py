"""Where a run may be sent by its publisher. The source's own URL is the operator's choice and is
fetched wherever it points. Anywhere else a publisher sends the run (a redirect, each hop of one; a
link on its page) must be a public address, unless the source's own host is itself on a loopback or
private address (a publisher on the operator's network may send the run to another machine there).
Link-local and cloud-metadata addresses are never reached that way. The addresses are judged by the
outbound guard that webhooks and mail use (D26, vpx.outbound)."""

from __future__ import annotations

import httpx

from vpx.outbound.guard import HostUnresolved, TargetRefused, check_host
from vpx.outbound.resolver import Resolver, system_resolver
from vpx.sources.failures import SourceFailed

# A redirect's hops followed at most, each one checked.
MAX_REDIRECTS = 10


def origin(url: httpx.URL) -> tuple[str, str, int]:
    return url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80)


class Egress:
    """The checks of one run: ``check`` every URL before it is asked for."""

    def __init__(self, source_url: str, *, resolver: Resolver = system_resolver, private: bool | None = None) -> None:
        """``private``: whether the source's own host counts as non-public; None: looked up."""
        self.own = origin(httpx.URL(source_url))
        self.resolver = resolver
        self._private = private

    async def allows_private(self) -> bool:
        """Whether the source's own host is on a non-public address (looked up once a run)."""
        if self._private is None:
            _scheme, host, port = self.own
            try:
                await check_host(host, port, allow_private=False, resolver=self.resolver)
            except HostUnresolved as exc:
                raise httpx.ConnectError(str(exc)) from None  # retried as an unreachable server is
            except TargetRefused:
                self._private = True
            else:
                self._private = False
        return self._private

    async def check(self, url: httpx.URL, *, sent_by: str) -> None:
        """SourceFailed (``address_refused``) when the run may not go to ``url``, which ``sent_by``
        (a redirect from a URL, a page) sent it to; httpx.ConnectError when its host does not resolve."""
        if origin(url) == self.own:
            return
        if url.scheme not in ("http", "https"):
            raise SourceFailed(
                f"{sent_by} sent the run to {url}: only http and https are followed", code="address_refused"
            )
        _scheme, host, port = origin(url)
        try:
            await check_host(host, port, allow_private=await self.allows_private(), resolver=self.resolver)
        except HostUnresolved as exc:
            raise httpx.ConnectError(str(exc)) from None
        except TargetRefused as exc:
            rule = (
                "no source is sent on to a link-local or cloud-metadata address"
                if self._private
                else "a source on a public address is sent on to public addresses only"
            )
            raise SourceFailed(
                f"{sent_by} sent the run to {url}, which it may not reach ({exc}): {rule}",
                code="address_refused",
            ) from None
