"""A real HTTP receiver for webhook tests: a threaded http.server on 127.0.0.1 (or ::1) that records every
request and answers from a script (status, headers, delay) per path, 200 when the script runs out."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


class _Ipv6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class Receiver:
    def __init__(self, tls: ssl.SSLContext | None = None, *, host: str = "127.0.0.1") -> None:
        self.requests: list[Received] = []
        self.scripts: dict[str, deque[Answer]] = defaultdict(deque)
        self.default_delay = 0.0
        self.lock = threading.Lock()
        self.stopped = False
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                with receiver.lock:
                    # Recorded on arrival: a sender that dies before the answer has still delivered.
                    receiver.requests.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    script = receiver.scripts[self.path]
                    answer = script.popleft() if script else Answer(delay=receiver.default_delay)
                if answer.delay:
                    time.sleep(answer.delay)
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: object) -> None:
                pass

        server_class = _Ipv6Server if ":" in host else ThreadingHTTPServer
        self.server = server_class((host, 0), Handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://[{host}]:{port}" if ":" in str(host) else f"http://{host}:{port}"

    def url(self, path: str = "/hook") -> str:
        return self.base_url + path

    def script(self, path: str, *answers: Answer) -> None:
        with self.lock:
            self.scripts[path].extend(answers)

    def received(self, path: str | None = None) -> list[Received]:
        with self.lock:
            return [r for r in self.requests if path is None or r.path == path]

    async def wait_for(self, count: int, *, path: str | None = None, limit: float = 10.0) -> list[Received]:
        """Waits (bounded) until ``count`` requests have arrived; returns what arrived."""
        deadline = time.monotonic() + limit
        # The receiver runs in threads; polling its list is the simple bridge back to the event loop.
        while len(self.received(path)) < count and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        return self.received(path)

    def start(self) -> Receiver:
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        self.server.shutdown()
        self.server.server_close()
