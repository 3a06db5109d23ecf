"""A fake publisher on loopback: serves files over HTTP as publishers' servers do (ETag and
Last-Modified with 304s, byte ranges with If-Range), and misbehaves on request: answers 429 with a
Retry-After, 5xx for a while or for ever, cuts the connection half-way through a body, or trickles a
body a byte at a time. ``routes`` answer queries (the portals' APIs in tests/sources/portals.py, a
redirect); ``gate`` refuses requests by their headers (a publisher that wants a declared User-Agent)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs


@dataclass
class Served:
    body: bytes
    etag: str | None = None
    last_modified: str | None = "Mon, 09 Nov 2026 06:00:00 GMT"
    content_type: str = "application/octet-stream"
    send_length: bool = True  # False: no Content-Length, the body ends when the connection closes


@dataclass
class Fault:
    """What the next request for a path gets instead of the file: ``status`` (with ``headers``), or
    the file cut after ``cut_after`` bytes of its body, or its body sent one byte every ``trickle``
    seconds; any of them after ``delay`` seconds."""

    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    cut_after: int | None = None
    delay: float = 0.0  # seconds before answering (a slow publisher)
    trickle: float | None = None


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    status: int
    query: dict[str, str] = field(default_factory=dict)
    at: float = field(default_factory=time.monotonic)


@dataclass
class Answer:
    """What a route answers: a status, a body and headers."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


# A route: (the query's parameters, the request's headers, lower-cased) -> the answer.
Route = Callable[[dict[str, str], dict[str, str]], Answer]


class Publisher:
    """``files`` by path; ``faults`` queued per path (each used once); ``down`` paths that answer that
    status to every request; ``seen`` every request with its headers and the status answered."""

    def __init__(self) -> None:
        self.files: dict[str, Served] = {}
        self.faults: dict[str, list[Fault]] = {}
        self.down: dict[str, int] = {}
        self.seen: list[Seen] = []
        self.routes: dict[str, Route] = {}
        self.gate: Callable[[dict[str, str]], Answer | None] | None = None
        self.lock = threading.Lock()
        self.closed = threading.Event()
        publisher = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                publisher.answer(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def serve(self, path: str, body: bytes, **more: Any) -> Served:
        served = Served(body, etag=more.pop("etag", f'"{hash(body) & 0xFFFFFFFF:x}"'), **more)
        with self.lock:
            self.files[path] = served
        return served

    def fail_next(self, path: str, *faults: Fault) -> None:
        with self.lock:
            self.faults.setdefault(path, []).extend(faults)

    def requests_for(self, path: str) -> list[Seen]:
        with self.lock:
            return [s for s in self.seen if s.path == path]

    def close(self) -> None:
        self.closed.set()
        self.server.shutdown()
        self.server.server_close()

    def route(self, path: str, route: Route) -> None:
        with self.lock:
            self.routes[path] = route

    def answer(self, handler: BaseHTTPRequestHandler) -> None:
        path, _, raw_query = handler.path.partition("?")
        query = {k: v[-1] for k, v in parse_qs(raw_query, keep_blank_values=True).items()}
        headers = {k.lower(): v for k, v in handler.headers.items()}
        with self.lock:
            down = self.down.get(path)
            queued = self.faults.get(path) or []
            fault = queued.pop(0) if queued and down is None else None
            served = self.files.get(path)
            route = self.routes.get(path)
            gate = self.gate

        if fault is not None and fault.delay:
            time.sleep(fault.delay)

        def seen(status: int) -> None:
            with self.lock:
                self.seen.append(Seen(path, headers, status, query))

        refused = gate(headers) if gate is not None else None
        if refused is not None:
            seen(refused.status)
            self._send(handler, refused)
            return

        if down is not None or (fault is not None and fault.status is not None):
            status = down if down is not None else fault.status  # type: ignore[union-attr]
            assert status is not None
            seen(status)
            handler.send_response(status)
            for name, value in (fault.headers if fault is not None else {}).items():
                handler.send_header(name, value)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        if route is not None:
            answered = route(query, headers)
            seen(answered.status)
            self._send(handler, answered)
            return
        if served is None:
            seen(404)
            handler.send_error(404)
            return
        if (served.etag and headers.get("if-none-match") == served.etag) or (
            served.last_modified and "if-none-match" not in headers
            and headers.get("if-modified-since") == served.last_modified
        ):  # fmt: skip
            seen(304)
            handler.send_response(304)
            handler.end_headers()
            return
        body, status, first = served.body, 200, 0
        wanted = headers.get("range", "")
        if wanted.startswith("bytes=") and headers.get("if-range") in (served.etag, served.last_modified):
            first = int(wanted.removeprefix("bytes=").split("-", 1)[0])
            if first >= len(body):
                seen(416)
                handler.send_response(416)
                handler.send_header("Content-Range", f"bytes */{len(body)}")
                handler.end_headers()
                return
            status = 206
        part = body[first:]
        seen(status)
        handler.send_response(status)
        handler.send_header("Content-Type", served.content_type)
        if served.send_length:
            handler.send_header("Content-Length", str(len(part)))
        if status == 206:
            handler.send_header("Content-Range", f"bytes {first}-{len(body) - 1}/{len(body)}")
        if served.etag:
            handler.send_header("ETag", served.etag)
        if served.last_modified:
            handler.send_header("Last-Modified", served.last_modified)
        handler.send_header("Accept-Ranges", "bytes")
        handler.end_headers()
        if fault is not None and fault.trickle is not None:
            self._trickle(handler, part, fault.trickle)
            return
        if fault is not None and fault.cut_after is not None:
            handler.wfile.write(part[: fault.cut_after])
            handler.wfile.flush()
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return
        handler.wfile.write(part)

    def _trickle(self, handler: BaseHTTPRequestHandler, body: bytes, every: float) -> None:
        """One byte, then a pause, until the body ends, the client goes or the publisher closes."""
        for at in range(len(body)):
            if self.closed.wait(every):
                return
            try:
                handler.wfile.write(body[at : at + 1])
                handler.wfile.flush()
            except OSError:
                return

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, answer: Answer) -> None:
        handler.send_response(answer.status)
        for name, value in answer.headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(answer.body)))
        handler.end_headers()
        handler.wfile.write(answer.body)
