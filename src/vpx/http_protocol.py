"""The server's answer to bytes that are not HTTP/1.1: a problem document, like every other error.

uvicorn answers a message it cannot parse (a header name that is not a token, a Transfer-Encoding it
does not know, bytes that are no request at all) itself, before any application sees it, with a bare
``400`` in ``text/plain``. These protocols are uvicorn's own (httptools' when installed, as uvicorn
picks by itself, else h11's) with that one answer replaced by ``application/problem+json``:
``malformed_request``, with a request id in the body and in ``X-Request-Id``, then the connection
closed as before. ``vpx serve`` runs them; with uvicorn directly, pass
``--http vpx.http_protocol:ProblemHttpProtocol``.
"""

from __future__ import annotations

import asyncio
import json
import uuid

from uvicorn.protocols.http.h11_impl import H11Protocol

from vpx.errors import PROBLEM_JSON, MalformedRequest

DETAIL = "The request is not valid HTTP/1.1 and could not be read; nothing was done."
IMPORT_PATH = "vpx.http_protocol:ProblemHttpProtocol"


def refusal(default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The whole 400 response, status line to body, with the server's default headers (Date, Server)."""
    request_id = f"req_{uuid.uuid4().hex}"
    body = json.dumps(
        {
            "type": f"urn:vpx:problem:{MalformedRequest.code}",
            "title": MalformedRequest.title,
            "status": 400,
            "detail": DETAIL,
            "code": MalformedRequest.code,
            "request_id": request_id,
        }
    ).encode()
    head = [b"HTTP/1.1 400 Bad Request"]
    head += [name + b": " + value for name, value in default_headers]
    head += [
        b"content-type: " + PROBLEM_JSON.encode(),
        b"content-length: " + str(len(body)).encode(),
        b"x-request-id: " + request_id.encode(),
        b"connection: close",
    ]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


class ProblemH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, answering an unreadable request with a problem document."""

    def send_400_response(self, msg: str) -> None:
        self.transport.write(refusal(self.server_state.default_headers))
        self.transport.close()


ProblemHttpProtocol: type[asyncio.Protocol]
try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - httptools is installed with uvicorn[standard]
    ProblemHttpProtocol = ProblemH11Protocol
else:

    class ProblemHttpToolsProtocol(HttpToolsProtocol):
        """uvicorn's httptools protocol, answering an unreadable request with a problem document."""

        def send_400_response(self, msg: str) -> None:
            self.transport.write(refusal(self.server_state.default_headers))
            self.transport.close()

    ProblemHttpProtocol = ProblemHttpToolsProtocol
