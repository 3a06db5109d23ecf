"""Fetching a publisher's files and pages: conditional requests (a 304 costs nothing), downloads
streamed to disk that resume with ``Range`` after a cut connection, and the run's retry rules.

Inside one run a 429 waits its ``Retry-After`` (up to a minute in all, else the run fails and the next
run tries again); a 5xx or an unreachable server is retried with growing pauses for up to two minutes,
then the run fails. A download cut half-way goes on from the last byte received (``If-Range`` makes
sure it is still the same file), so nothing is read twice and a large file is never fetched again
whole for a hiccup.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import IO, Any

import httpx

from vpx import __version__

USER_AGENT = f"vpx/{__version__} (source sync)"
CHUNK = 1024 * 1024
# A page or API answer read into memory (the download page, a JSON page of records) stops here.
MAX_PAGE_BYTES = 64 * 1024 * 1024


class SourceFailed(Exception):
    """A run that cannot go on: the message says why in plain words; ``code`` is stable snake_case
    (``rate_limited``, ``server_error``, ``unexpected_layout`` …) for ``--json`` output; ``status`` the
    HTTP status a publisher refused a request with (``http_error``: a 404 for a day with no file…)."""

    def __init__(self, message: str, *, code: str = "source_failed", status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status


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


class Fetcher:
    """HTTP for one run: every request counted (``requests``), retried by the policy, paced to at most
    ``requests_per_second`` when a kind sets it (a publisher's published limit)."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        policy: RetryPolicy = DEFAULT_POLICY,
        sleep: Sleep = asyncio.sleep,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.client = client
        self.policy = policy
        self.sleep = sleep
        self.headers = {"User-Agent": USER_AGENT, **(headers or {})}
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
        while True:
            await self._paced()
            try:
                async with self.client.stream("GET", url, params=params, headers=sent) as response:
                    status = response.status_code
                    if status == 429:
                        await patience.after_rate_limit(response)
                        continue
                    if status >= 500:
                        await patience.after_server_error(f"{status} {response.reason_phrase}".strip())
                        continue
                    if status == 304:
                        return Page(str(response.url), 304, b"", response.headers, validators or Validators())
                    if status != 200:
                        raise SourceFailed(_refused(url, response), code="http_error", status=response.status_code)
                    body = bytearray()
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) > max_bytes:
                            raise SourceFailed(
                                f"{url} answered more than {max_bytes // (1024 * 1024)} MB", code="unexpected_layout"
                            )
                    self.bytes_downloaded += len(body)
                    found = Validators.from_response(response)
                    charset = response.charset_encoding
                    return Page(str(response.url), 200, bytes(body), response.headers, found, charset)
            except httpx.TransportError as exc:
                await patience.after_server_error(_transport_words(exc))

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
        ``not_modified``. Refuses a download shorter than the server announced."""
        known = validators or Validators()
        part = _PartFile(dest)
        patience = _Patience(url, self.policy, self.sleep)
        resumed = 0
        while True:
            offset = part.resumable_from(url)
            sent = {**self.headers, "Accept-Encoding": "identity", **known.conditional_headers(), **(headers or {})}
            if offset:
                sent["Range"] = f"bytes={offset}-"
                sent["If-Range"] = part.if_range
            in_body = False
            try:
                await self._paced()
                async with self.client.stream("GET", url, headers=sent) as response:
                    status = response.status_code
                    if status == 304:
                        part.discard()
                        return Downloaded(url, True, None, known)
                    if status == 429:
                        await patience.after_rate_limit(response)
                        continue
                    if status >= 500:
                        await patience.after_server_error(f"{status} {response.reason_phrase}".strip())
                        continue
                    if status == 416 and offset:
                        part.discard()  # what we hold is not a prefix of the file any more
                        continue
                    if status not in (200, 206):
                        raise SourceFailed(_refused(url, response), code="http_error", status=response.status_code)
                    start, total = _span(response, offset)
                    if status == 206 and start != offset:
                        part.discard()
                        continue
                    if status == 200:
                        offset = 0
                    fresh = Validators.from_response(response)
                    await asyncio.to_thread(part.open, url, fresh, offset)
                    in_body = True
                    try:
                        async for chunk in response.aiter_raw():  # as received: a cut keeps every byte
                            part.write(chunk)
                            self.bytes_downloaded += len(chunk)
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
            digest, size = await asyncio.to_thread(part.finish)
            complete = Validators(etag=part.etag, last_modified=part.last_modified, sha256=digest, size=size)
            if size == 0:
                await asyncio.to_thread(dest.unlink, True)
                raise SourceFailed(f"{url} is empty", code="empty_file")
            if known.sha256 is not None and digest == known.sha256:
                await asyncio.to_thread(dest.unlink, True)  # the same bytes as the version applied
                return Downloaded(url, True, None, complete, size=size, resumed=resumed)
            return Downloaded(url, False, dest, complete, size=size, resumed=resumed)


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


@dataclass
class _PartFile:
    """``dest.part`` and beside it what the server said of the file (``.part.json``), so that a later
    request, in this run or the next, may go on where the bytes stop."""

    dest: Path
    etag: str | None = None
    last_modified: str | None = None
    size: int = 0
    _handle: IO[bytes] | None = None
    _hash: Any = field(default=None)

    @property
    def path(self) -> Path:
        return self.dest.with_name(self.dest.name + ".part")

    @property
    def meta(self) -> Path:
        return self.dest.with_name(self.dest.name + ".part.json")

    @property
    def if_range(self) -> str:
        return self.etag or self.last_modified or ""

    def resumable_from(self, url: str) -> int:
        """Bytes held of ``url`` that the server may continue (a strong ETag or a Last-Modified to
        tie them to the same file); 0 when none."""
        try:
            meta = json.loads(self.meta.read_text())
            held = self.path.stat().st_size
        except (OSError, ValueError):
            return 0
        etag = meta.get("etag")
        self.etag = etag if etag and not etag.startswith("W/") else None
        self.last_modified = meta.get("last_modified")
        if meta.get("url") != url or not (self.etag or self.last_modified):
            return 0
        self.size = held
        return held

    def open(self, url: str, validators: Validators, offset: int) -> None:
        self.dest.parent.mkdir(parents=True, exist_ok=True)
        self.etag, self.last_modified = validators.etag, validators.last_modified
        self._hash = hashlib.sha256()
        if offset:
            with self.path.open("rb") as held:
                while chunk := held.read(CHUNK):
                    self._hash.update(chunk)
            self._handle = self.path.open("r+b")
            self._handle.truncate(offset)
            self._handle.seek(offset)
        else:
            self._handle = self.path.open("wb")
        self.size = offset
        meta = {"url": url, "etag": validators.etag, "last_modified": validators.last_modified}
        self.meta.write_text(json.dumps(meta))

    def write(self, chunk: bytes) -> None:
        assert self._handle is not None
        self._handle.write(chunk)
        self._hash.update(chunk)
        self.size += len(chunk)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def finish(self) -> tuple[str, int]:
        """The complete file moved into place; its SHA-256 and size."""
        os.replace(self.path, self.dest)
        self.meta.unlink(missing_ok=True)
        return self._hash.hexdigest(), self.size

    def discard(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)
        self.meta.unlink(missing_ok=True)
        self.size = 0
