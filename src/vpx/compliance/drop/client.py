"""DROP's Data Broker API, as its technical specification describes it (version 1.2.0):

- ``GET /data/download`` with ``X-API-KEY``: 200 ``application/zip`` (one ``ID,Hash`` CSV per list,
  perhaps a ``_Removed.csv``), or 200 JSON ``{"message": …}`` when nothing is new; 202 with
  ``Retry-After`` while the batch is packaged; 409 while the last batch has items without a status;
  401 a bad key, 403 not eligible, 429 with ``Retry-After``;
- ``POST /data/upload``, multipart field ``files``, one ``Id,Status`` CSV per list named as downloaded:
  202 with the files accepted and rejected; 400 when none was (a bad header, a name already uploaded
  for this download); 409 when no download waits for answers.

Errors come as JSON ``{"message": …}``; their words are passed on to the operator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import httpx

from vpx.outbound.transport import CheckedTransport

_FILENAME = re.compile(r'filename\*?=(?:UTF-8\'\')?"?([^";]+)"?', re.IGNORECASE)
MAX_WAIT_SECONDS = 3600


class DropError(Exception):
    """DROP refused or failed the request; ``status`` is its HTTP status (0: it could not be reached)."""

    def __init__(self, message: str, *, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class DropWait(Exception):
    """DROP asked to come back later (202 while packaging, 429): after ``seconds``."""

    def __init__(self, message: str, *, seconds: int, status: int) -> None:
        super().__init__(message)
        self.seconds = seconds
        self.status = status


@dataclass(frozen=True)
class Download:
    """A download's answer: a ZIP (``content``, ``file_name``) or nothing new (``content`` None)."""

    content: bytes | None
    file_name: str | None
    message: str | None = None


@dataclass
class UploadAnswer:
    accepted: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    message: str = ""


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300] or response.reason_phrase
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])[:500]
    return response.reason_phrase


def _retry_after(response: httpx.Response, default: int) -> int:
    try:
        seconds = int(response.headers.get("retry-after", ""))
    except ValueError:
        return default
    return max(1, min(seconds, MAX_WAIT_SECONDS))


def _refusal(response: httpx.Response, what: str) -> Exception:
    message = _message(response)
    if response.status_code == 429:
        return DropWait(f"DROP: too many requests ({message})", seconds=_retry_after(response, 30), status=429)
    if response.status_code == 401:
        return DropError(f"DROP refused the API key ({message}): check VPX_DROP_API_KEY", status=401)
    if response.status_code == 403:
        return DropError(f"DROP says this broker may not {what} ({message})", status=403)
    return DropError(f"DROP answered {response.status_code} to the {what} ({message})", status=response.status_code)


class DropClient:
    """The two calls vpx makes. ``transport``: tests hand a transport of their own (never needed: the
    tests run a fake server on 127.0.0.1). The URL is the operator's: the outbound guard admits their
    network, as it does for their own SMTP server."""

    def __init__(
        self, base_url: str, api_key: str, *, timeout: float, transport: httpx.AsyncBaseTransport | None = None
    ):
        self.base_url = base_url.rstrip("/")
        checked = CheckedTransport(transport or httpx.AsyncHTTPTransport(), allow_private=True)
        self._client = httpx.AsyncClient(
            headers={"X-API-KEY": api_key}, timeout=timeout, transport=checked, follow_redirects=False
        )

    async def close(self) -> None:
        await self._client.aclose()

    async def download(self) -> Download:
        try:
            response = await self._client.get(
                f"{self.base_url}/data/download", headers={"Accept": "application/zip, application/json"}
            )
        except httpx.HTTPError as exc:
            raise DropError(f"DROP could not be reached: {type(exc).__name__}") from None
        if response.status_code == 202:
            message = _message(response)
            raise DropWait(f"DROP is packaging the batch ({message})", seconds=_retry_after(response, 60), status=202)
        if response.status_code == 409:
            raise DropError(
                f"DROP says the last batch is not complete ({_message(response)}): answer it with `vpx drop report`",
                status=409,
            )
        if response.status_code != 200:
            raise _refusal(response, "download")
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == "application/json":
            return Download(content=None, file_name=None, message=_message(response))
        found = _FILENAME.search(response.headers.get("content-disposition", ""))
        return Download(content=response.content, file_name=found.group(1) if found else None)

    async def upload(self, files: list[tuple[str, bytes]]) -> UploadAnswer:
        """POSTs the answer files; raises DropError when DROP took none (400, 409…)."""
        parts = [("files", (name, body, "text/csv")) for name, body in files]
        try:
            response = await self._client.post(
                f"{self.base_url}/data/upload", files=parts, headers={"Accept": "application/json"}
            )
        except httpx.HTTPError as exc:
            raise DropError(f"DROP could not be reached: {type(exc).__name__}") from None
        if response.status_code in (200, 202, 400):
            answer = _upload_answer(response)
            if response.status_code == 400 or not answer.accepted:
                reasons = "; ".join(f"{name}: {why}" for name, why in answer.rejected) or answer.message
                raise DropError(f"DROP took none of the files ({reasons})", status=response.status_code)
            return answer
        if response.status_code == 409:
            raise DropError(f"DROP has no download waiting for answers ({_message(response)})", status=409)
        raise _refusal(response, "upload")


def _upload_answer(response: httpx.Response) -> UploadAnswer:
    try:
        body: Any = response.json()
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    answer = UploadAnswer(message=str(body.get("message", "")))
    for item in body.get("accepted") or []:
        if isinstance(item, dict) and isinstance(item.get("fileName"), str):
            answer.accepted.append(item["fileName"])
    for item in body.get("rejected") or []:
        if isinstance(item, dict):
            answer.rejected.append((str(item.get("fileName", "")), str(item.get("message", ""))))
    return answer
