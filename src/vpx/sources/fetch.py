"""Fetching a publisher's files and pages: conditional requests (a 304 costs nothing), downloads
streamed to disk that resume with ``Range`` after a cut connection, the run's retry rules and the
source's limits (vpx.sources.limits: the largest download, a request that stalls), redirects followed
hop by hop where vpx.sources.egress allows.

Inside one run a 429 waits its ``Retry-After`` (up to a minute in all, else the run fails and the next
run tries again); a 5xx or an unreachable server is retried with growing pauses for up to two minutes,
then the run fails. A download cut half-way goes on from the last byte received (``If-Range`` makes
sure it is still the same file), so nothing is read twice and a large file is never fetched again
whole for a hiccup.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import httpx

from vpx import __version__
from vpx.sources.egress import MAX_REDIRECTS, Egress, origin
from vpx.sources.failures import SourceFailed
from vpx.sources.limits import PROGRESS_BYTES, Limits, format_seconds, human_size
from vpx.sources.partfile import PartFile

__all__ = ["SourceFailed"]  # where the kinds have always found it

USER_AGENT = f"vpx/{__version__} (source sync)"
# A page or API answer read into memory (the download page, a JSON page of records) stops here.
MAX_PAGE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class RetryPolicy:
    """How long one run waits for a publisher before it gives up (the next run tries again)."""

    retry_after_cap: float = 60.0  # 429s: the Retry-After waits of one request, added up
    server_error_budget: float = 120.0  # 5xx and unreachable: from the first failure of a request
    backoff: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)
    resumes: int = 20  # a download cut this many times in one run fails the run
    connect_timeout: float = 30.0
    read_timeout: float = 120.0


DEFAULT_POLICY = RetryPolicy()


@dataclass(frozen=True)
class Validators:
    """What identifies the version of a file already applied: the server's ``ETag`` and
    ``Last-Modified`` (sent back as ``If-None-Match`` / ``If-Modified-Since``), and the content's
    SHA-256 and size for servers that send neither (the same bytes again are not imported again)."""

    etag: str | None = None
    last_modified: str | None = None
    sha256: str | None = None
    size: int | None = None

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if v is not None}

    @classmethod
    def of(cls, value: Mapping[str, Any] | None) -> Validators:
        if not value:
            return cls()
        return cls(
            etag=value.get("etag"),
            last_modified=value.get("last_modified"),
            sha256=value.get("sha256"),
            size=value.get("size"),
        )

    def conditional_headers(self) -> dict[str, str]:
        headers = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers

    @classmethod
    def from_response(cls, response: httpx.Response, **more: Any) -> Validators:
        return cls(etag=response.headers.get("etag"), last_modified=response.headers.get("last-modified"), **more)


@dataclass
class Downloaded:
    """A download's outcome: ``not_modified`` (a 304, or the very bytes applied last time: no file is
    left), else the complete file at ``path``."""

    url: str
    not_modified: bool
    path: Path | None
    validators: Validators
    size: int = 0
    resumed: int = 0  # how many times it went on after a cut


@dataclass
class Page:
    """A page or API answer held in memory; ``not_modified`` for a 304 (``body`` empty)."""

    url: str
    status: int
    body: bytes
    headers: httpx.Headers
    validators: Validators
    charset: str | None = None

    @property
    def not_modified(self) -> bool:
        return self.status == 304

    @property
    def text(self) -> str:
        try:
            return self.body.decode(self.charset or "utf-8", errors="replace")
        except LookupError:  # a charset Python does not know
            return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except ValueError as exc:
            raise SourceFailed(f"{self.url} did not answer JSON ({exc})", code="unexpected_layout") from None

    async def read_json(self) -> Any:
        """``json()`` in a worker thread: a large answer is parsed off the event loop."""
        return await asyncio.to_thread(self.json)


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds: a number, or an HTTP date; None when absent or unreadable."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


Sleep = Callable[[float], Awaitable[None]]


class _Patience:
    """The retry budget of one request."""

    def __init__(self, url: str, policy: RetryPolicy, sleep: Sleep) -> None:
        self.url, self.policy, self.sleep = url, policy, sleep
        self.rate_limited_for = 0.0
        self.failing_since: float | None = None
        self.failures = 0

    def _pause(self) -> float:
        backoff = self.policy.backoff or (1.0,)
        return backoff[min(self.failures, len(backoff) - 1)]

    async def after_rate_limit(self, response: httpx.Response) -> None:
        asked = retry_after_seconds(response.headers.get("retry-after"))
        wait = asked if asked is not None else self._pause()
        if self.rate_limited_for + wait > self.policy.retry_after_cap:
            said = f"asked to wait {asked:g} s" if asked is not None else "rate-limited again"
            raise SourceFailed(
                f"{self.url} answered 429 Too Many Requests and {said}, more than this run waits "
                f"({self.policy.retry_after_cap:g} s in all); the next run tries again",
                code="rate_limited",
            )
        self.rate_limited_for += wait
        self.failures += 1
        await self.sleep(wait)

    async def after_server_error(self, what: str) -> None:
        now = time.monotonic()
        if self.failing_since is None:
            self.failing_since = now
        wait = self._pause()
        if now + wait - self.failing_since > self.policy.server_error_budget:
            raise SourceFailed(
                f"{self.url}: {what}, still after {round(now - self.failing_since)} s of retries; the next run "
                "tries again",
                code="server_error",
            )
        self.failures += 1
        await self.sleep(wait)


class _Watch:
    """A request's stall watchdog: the request is given up when less than PROGRESS_BYTES came in
    ``stall`` seconds (waiting for the answer's head included). A publisher that sends a byte now and
    then keeps a read timeout from ever firing; it does not keep this one."""

    def __init__(self, stall: float) -> None:
        self.stall = stall
        self.timeout = asyncio.timeout(stall)
        self._bytes = 0

    def _renew(self) -> None:
        self._bytes = 0
        self.timeout.reschedule(asyncio.get_running_loop().time() + self.stall)

    def answered(self) -> None:
        self._renew()

    def came(self, count: int) -> None:
        self._bytes += count
        if self._bytes >= PROGRESS_BYTES:
            self._renew()

    def fired(self) -> bool:
        return self.timeout.expired()


class Fetcher:
    """HTTP for one run: every request counted (``requests``), retried by the policy, paced to at most
    ``requests_per_second`` when a kind sets it (a publisher's published limit), bounded by the
    source's ``limits``, every hop checked by ``egress`` (none: not checked)."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        policy: RetryPolicy = DEFAULT_POLICY,
        sleep: Sleep = asyncio.sleep,
        headers: Mapping[str, str] | None = None,
        limits: Limits | None = None,
        egress: Egress | None = None,
    ) -> None:
        self.client = client
        self.policy = policy
        self.sleep = sleep
        self.headers = {"User-Agent": USER_AGENT, **(headers or {})}
        self.limits = limits or Limits()
        self.egress = egress
        self.requests = 0
        self.bytes_downloaded = 0
        self.requests_per_second: float | None = None
        self._last_request = 0.0

    async def _paced(self) -> None:
        self.requests += 1
        if not self.requests_per_second:
            return
        gap = 1.0 / self.requests_per_second - (time.monotonic() - self._last_request)
        if gap > 0:
            await asyncio.sleep(gap)
        self._last_request = time.monotonic()

    @contextlib.asynccontextmanager
    async def _answer(
        self,
        url: str,
        *,
        headers: Mapping[str, str],
        params: Mapping[str, str] | None = None,
        own: Mapping[str, str] | None = None,
    ) -> AsyncIterator[httpx.Response]:
        """The answer to a GET of ``url``, redirects followed one hop at a time, each hop checked by
        the egress rules. The caller's ``own`` headers (an app token) are not sent on to another host."""
        request = self.client.build_request("GET", url, params=params, headers=headers)
        if self.egress is not None:
            await self.egress.check(request.url, sent_by="the publisher")
        hops = 0
        while True:
            response = await self.client.send(request, stream=True, follow_redirects=False)
            following = response.next_request
            if following is None:
                break
            await response.aclose()
            hops += 1
            if hops > MAX_REDIRECTS:
                raise SourceFailed(f"{url} redirected more than {MAX_REDIRECTS} times", code="too_many_redirects")
            if own and origin(following.url) != origin(request.url):
                for name in own:
                    following.headers.pop(name, None)
            if self.egress is not None:
                await self.egress.check(following.url, sent_by=f"a redirect from {request.url}")
            request = following
        try:
            yield response
        finally:
            await response.aclose()

    async def get(
        self,
        url: str,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        validators: Validators | None = None,
        max_bytes: int = MAX_PAGE_BYTES,
    ) -> Page:
        """A page or an API answer, retried by the policy; a 304 when ``validators`` still hold."""
        patience = _Patience(url, self.policy, self.sleep)
        sent = {**self.headers, **(validators.conditional_headers() if validators else {}), **(headers or {})}
        most = min(max_bytes, self.limits.max_download)
        while True:
            await self._paced()
            watch = _Watch(self.limits.stall_timeout)
            retry: httpx.Response | None = None
            try:
                async with watch.timeout, self._answer(url, params=params, headers=sent, own=headers) as response:
                    watch.answered()
                    status = response.status_code
                    if status == 304:
                        return Page(str(response.url), 304, b"", response.headers, validators or Validators())
                    if status == 429 or status >= 500:
                        retry = response  # waited for once the connection is let go
                    elif status != 200:
                        raise SourceFailed(_refused(url, response), code="http_error", status=response.status_code)
                    else:
                        body = bytearray()
                        async for chunk in response.aiter_bytes():
                            body += chunk
                            watch.came(len(chunk))
                            if len(body) > most:
                                raise SourceFailed(self._too_large(url, most), code="download_too_large")
                        self.bytes_downloaded += len(body)
                        found = Validators.from_response(response)
                        charset = response.charset_encoding
                        return Page(str(response.url), 200, bytes(body), response.headers, found, charset)
            except httpx.TransportError as exc:
                await patience.after_server_error(_transport_words(exc))
                continue
            except TimeoutError:
                if not watch.fired():
                    raise
                raise SourceFailed(f"{url} {self._stalled()}; the next run tries again", code="stalled") from None
            await self._wait_for(retry, patience)

    async def download(
        self,
        url: str,
        dest: Path,
        *,
        validators: Validators | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Downloaded:
        """The file at ``url`` streamed to ``dest`` (via ``dest.part``, which survives a cut and a
        crash and is continued with ``Range`` when the server says the file is the same one), or
        ``not_modified``. Refuses a download shorter than the server announced, or larger than the
        source's ``max_download`` (nothing of it is kept)."""
        known = validators or Validators()
        part = PartFile(dest)
        patience = _Patience(url, self.policy, self.sleep)
        most = self.limits.max_download
        resumed = 0
        while True:
            offset = part.resumable_from(url)
            sent = {**self.headers, "Accept-Encoding": "identity", **known.conditional_headers(), **(headers or {})}
            if offset:
                sent["Range"] = f"bytes={offset}-"
                sent["If-Range"] = part.if_range
            in_body = False
            watch = _Watch(self.limits.stall_timeout)
            retry: httpx.Response | None = None
            try:
                await self._paced()
                async with watch.timeout, self._answer(url, headers=sent, own=headers) as response:
                    watch.answered()
                    status = response.status_code
                    if status == 304:
                        part.discard()
                        return Downloaded(url, True, None, known)
                    if status == 429 or status >= 500:
                        retry = response  # waited for once the connection is let go
                    elif status == 416 and offset:
                        part.discard()  # what we hold is not a prefix of the file any more
                        continue
                    elif status not in (200, 206):
                        raise SourceFailed(_refused(url, response), code="http_error", status=response.status_code)
                    else:
                        start, total = _span(response, offset)
                        if status == 206 and start != offset:
                            part.discard()
                            continue
                        if status == 200:
                            offset = 0
                        if total is not None and total > most:
                            part.discard()
                            raise SourceFailed(self._too_large(url, most, announced=total), code="download_too_large")
                        fresh = Validators.from_response(response)
                        await asyncio.to_thread(part.open, url, fresh.etag, fresh.last_modified, offset)
                        in_body = True
                        try:
                            async for chunk in response.aiter_raw():  # as received: a cut keeps every byte
                                if part.size + len(chunk) > most:
                                    part.discard()
                                    raise SourceFailed(self._too_large(url, most), code="download_too_large")
                                part.write(chunk)
                                self.bytes_downloaded += len(chunk)
                                watch.came(len(chunk))
                        finally:
                            part.close()
                        if total is not None and part.size < total:
                            raise httpx.RemoteProtocolError(f"the body stopped at byte {part.size} of {total}")
            except httpx.TransportError as exc:
                if in_body:
                    resumed += 1
                    if resumed > self.policy.resumes:
                        raise SourceFailed(
                            f"{url}: the connection was cut {resumed} times during the download "
                            f"({_transport_words(exc)}); the next run goes on from byte {part.size}",
                            code="incomplete_download",
                        ) from None
                    continue
                await patience.after_server_error(_transport_words(exc))
                continue
            except TimeoutError:
                if not watch.fired():
                    raise
                raise SourceFailed(
                    f"{url} {self._stalled()}; the next run goes on from byte {part.size}", code="stalled"
                ) from None
            if retry is not None:
                await self._wait_for(retry, patience)
                continue
            digest, size = await asyncio.to_thread(part.finish)
            complete = Validators(etag=part.etag, last_modified=part.last_modified, sha256=digest, size=size)
            if size == 0:
                await asyncio.to_thread(dest.unlink, True)
                raise SourceFailed(f"{url} is empty", code="empty_file")
            if known.sha256 is not None and digest == known.sha256:
                await asyncio.to_thread(dest.unlink, True)  # the same bytes as the version applied
                return Downloaded(url, True, None, complete, size=size, resumed=resumed)
            return Downloaded(url, False, dest, complete, size=size, resumed=resumed)

    async def _wait_for(self, retry: httpx.Response | None, patience: _Patience) -> None:
        """The wait a 429 or a 5xx asks for, outside the stall watchdog (it is not the publisher stalling)."""
        assert retry is not None
        if retry.status_code == 429:
            await patience.after_rate_limit(retry)
        else:
            await patience.after_server_error(f"{retry.status_code} {retry.reason_phrase}".strip())

    def _too_large(self, url: str, most: int, *, announced: int | None = None) -> str:
        size = f"is {human_size(announced)}" if announced is not None else f"answered more than {human_size(most)}"
        allowed = f"; this source downloads at most {self.limits.describe('max_download')}"
        return f"{url} {size}" + (allowed if most == self.limits.max_download else "")

    def _stalled(self) -> str:
        took = format_seconds(self.limits.stall_timeout)
        return f"stalled: less than {PROGRESS_BYTES // 1024} KB came in {took}, this source's stall_timeout"


def _refused(url: str, response: httpx.Response) -> str:
    return f"{url} answered {response.status_code} {response.reason_phrase}".rstrip()


def _transport_words(exc: httpx.TransportError) -> str:
    kind = {
        httpx.ConnectError: "cannot connect",
        httpx.ConnectTimeout: "the connection timed out",
        httpx.ReadTimeout: "no answer in time",
        httpx.RemoteProtocolError: "the connection was cut",
        httpx.ReadError: "the connection was cut",
    }.get(type(exc), "the connection failed")
    detail = str(exc).strip()
    return f"{kind} ({detail})" if detail else kind


def _span(response: httpx.Response, offset: int) -> tuple[int, int | None]:
    """(first byte, whole size) of a 200 or 206 answer; the size None when the server does not say."""
    if response.status_code == 206:
        found = response.headers.get("content-range", "")
        try:
            _unit, _, rest = found.partition(" ")
            span, _, whole = rest.partition("/")
            first = int(span.split("-", 1)[0])
            return first, (None if whole == "*" else int(whole))
        except ValueError:
            return -1, None
    length = response.headers.get("content-length")
    return 0, (int(length) if length and length.isdigit() else None)
