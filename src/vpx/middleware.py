"""Pure ASGI middleware: request ids, body limits and content types, query strings that are not
UTF-8, access logs, metrics, HSTS, and the response headers that dependencies leave in the request
state (rate limits, key rotation)."""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from typing import Any
from urllib.parse import unquote_to_bytes

from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from vpx import metrics

access_log = logging.getLogger("vpx.access")

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._\-]{1,64}$")
_BODY_METHODS = {"POST", "PUT", "PATCH"}
# Sent when the service's public address is https: browsers then never try it over plain http.
HSTS = "max-age=31536000; includeSubDomains"


def _problem(status: int, code: str, title: str, detail: str, request_id: str) -> tuple[bytes, list[Any]]:
    body = json.dumps(
        {
            "type": f"urn:vpx:problem:{code}",
            "title": title,
            "status": status,
            "detail": detail,
            "code": code,
            "request_id": request_id,
        }
    ).encode()
    headers = [
        (b"content-type", b"application/problem+json"),
        (b"content-length", str(len(body)).encode()),
    ]
    return body, headers


class RequestContextMiddleware:
    """Outermost layer: every response, errors included, carries X-Request-Id (D1), and any headers
    the request's dependencies put in ``state["response_headers"]``."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int, strict_transport: bool = False) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.strict_transport = strict_transport

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        incoming = headers.get("x-request-id", "")
        request_id = incoming if _REQUEST_ID.match(incoming) else f"req_{uuid.uuid4().hex}"
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        state["response_headers"] = {}
        started = time.perf_counter()
        status_holder = {"status": 500, "started": 0}

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_holder["status"] = message["status"]
                status_holder["started"] = 1
                out = MutableHeaders(scope=message)
                out["X-Request-Id"] = request_id
                if self.strict_transport:
                    out["Strict-Transport-Security"] = HSTS
                for name, value in state.get("response_headers", {}).items():
                    if name not in out:
                        out[name] = value
            await send(message)

        rejection = self._reject(scope, headers)
        try:
            if rejection is not None:
                status, code, title, detail = rejection
                body, raw_headers = _problem(status, code, title, detail, request_id)
                await send_wrapper({"type": "http.response.start", "status": status, "headers": raw_headers})
                await send_wrapper({"type": "http.response.body", "body": body})
            else:
                try:
                    await self.app(scope, self._limited(receive), send_wrapper)
                except Exception:
                    # Answered here rather than by the framework's outermost layer so that the
                    # 500 carries the request id like every other response.
                    access_log.exception("unhandled error", extra={"request_id": request_id})
                    if status_holder["started"]:
                        raise
                    body, raw_headers = _problem(
                        500,
                        "internal_error",
                        "Internal server error",
                        "An unexpected error occurred; it has been logged with this request's id.",
                        request_id,
                    )
                    await send_wrapper({"type": "http.response.start", "status": 500, "headers": raw_headers})
                    await send_wrapper({"type": "http.response.body", "body": body})
        finally:
            elapsed = time.perf_counter() - started
            route = scope.get("route")
            template = getattr(route, "path", None) or "<unmatched>"
            metrics.observe_request(scope["method"], template, status_holder["status"], elapsed)
            client = scope.get("client")
            access_log.info(
                "request",
                extra={
                    "request_id": request_id,
                    "method": scope["method"],
                    "path": scope["path"],
                    "route": template,
                    "status": status_holder["status"],
                    "duration_ms": round(elapsed * 1000, 2),
                    # A website visitor's address is never written anywhere (D33): not logged either.
                    "client": client[0] if client and not scope["path"].startswith("/v/") else None,
                    "key_id": state.get("key_id"),
                },
            )

    def _reject(self, scope: Scope, headers: Headers) -> tuple[int, str, str, str] | None:
        if not _is_utf8(scope.get("query_string", b"")):
            # Decoded leniently, the bad bytes would become U+FFFD and the filter silently ignored.
            return (
                400,
                "malformed_request",
                "Malformed request",
                "The query string is not UTF-8 once percent-decoded.",
            )
        length = headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                return 400, "malformed_request", "Malformed request", "Content-Length is not a number."
            if int(length) > self.max_body_bytes:
                return (
                    413,
                    "payload_too_large",
                    "Payload too large",
                    f"The body exceeds {self.max_body_bytes} bytes.",
                )
        if scope["method"] in _BODY_METHODS and scope["path"].startswith("/api/"):
            has_body = (length is not None and int(length) > 0) or "transfer-encoding" in headers
            content_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            raw_mail = content_type == "message/rfc822" and _takes_raw_mail(scope["path"])
            if has_body and not (content_type == "application/json" or content_type.endswith("+json") or raw_mail):
                return (
                    400,
                    "malformed_request",
                    "Malformed request",
                    "Bodies must be JSON, sent with Content-Type: application/json.",
                )
        return None

    def _limited(self, receive: Receive) -> Receive:
        limit = self.max_body_bytes
        seen = 0

        async def wrapped() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    # An HTTPException passes through the framework's body parsing untouched.
                    raise HTTPException(413, f"The body exceeds {limit} bytes.")
            return message

        return wrapped


def _is_utf8(query_string: bytes) -> bool:
    if query_string.isascii() and b"%" not in query_string:
        return True
    try:
        unquote_to_bytes(query_string).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _takes_raw_mail(path: str) -> bool:
    """`POST /api/v1/mailboxes/{id}/inbound` takes one raw RFC 5322 message (message/rfc822), not JSON."""
    return path.startswith("/api/v1/mailboxes/") and path.endswith("/inbound") and path.count("/") == 5
