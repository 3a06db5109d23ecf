"""A live `vpx serve` in a child process, the demo data it serves, and a webhook receiver."""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

# A Fernet key for the tests' sealed secrets (sealing nothing real).
SECRET_KEY = "iU-A_8wuCLlpPOQMs6T-0CdF2CeDSoT9utja-yhfznc="
ADMIN_TOKEN = "client-tests-admin-token-0123456789"
STARTUP_LIMIT_S = 60.0
VPX = str(Path(sys.executable).with_name("vpx"))


@dataclass(frozen=True)
class Seed:
    database_url: str
    account_id: str
    keys: dict[str, str]  # "ro", "live", "full"


@dataclass(frozen=True)
class LiveServer:
    url: str  # http://127.0.0.1:<port>
    seed: Seed
    data_dir: Path  # the server's data directory (VPX_DATA_DIR): the demo's keys file, its caught mail

    @property
    def api(self) -> str:
        return f"{self.url}/api/v1"

    def ingest(self, events: list[dict[str, object]]) -> list[str]:
        """Signals through the operator's admin API (D36); returns their ids."""
        answer = httpx.post(f"{self.api}/admin/signals", json=events, headers={"X-Admin-Token": ADMIN_TOKEN})
        assert answer.status_code in (200, 201), answer.text
        ids: list[str] = answer.json()["signal_ids"]
        return ids


def server_env(database_url: str, **settings: str) -> dict[str, str]:
    # The shell's own VPX_* settings (a demo feed, another database) stay out of the tests' servers.
    env = {
        **{name: value for name, value in os.environ.items() if not name.startswith("VPX_")},
        "VPX_DATABASE_URL": database_url,
        "VPX_SECRET_KEYS": SECRET_KEY,
        "VPX_ADMIN_TOKEN": ADMIN_TOKEN,
        "VPX_LOG_LEVEL": "WARNING",
        "VPX_RATE_LIMIT": "100000/minute",
        "VPX_AUTH_FAILURE_RATE_LIMIT": "100000/minute",
        **{f"VPX_{name.upper()}": value for name, value in settings.items()},
    }
    return env


def data_dir(seed: Seed) -> Path:
    """The data directory of the tests' servers: the folder of the SQLite file (never the shell's ./var)."""
    return Path(seed.database_url.split(":///", 1)[1]).parent


def seed_demo(path: Path, *, count: int | None = 1000) -> Seed:
    """`vpx demo --json` on a new SQLite file: ``count`` demo contacts (None: the demo's own 12,000)
    and the demo account's keys."""
    url = f"sqlite+aiosqlite:///{path}"
    done = subprocess.run(
        [VPX, "demo", "--json", *(["--count", str(count)] if count is not None else [])],
        env=server_env(url, DATA_DIR=str(path.parent)),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    printed = json.loads(done.stdout)
    return Seed(database_url=url, account_id=printed["account_id"], keys=printed["keys"])


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def live_server(seed: Seed, **settings: str) -> Iterator[LiveServer]:
    """`vpx serve` on a free loopback port with the given ``VPX_*`` settings, until the block ends."""
    port = free_port()
    settings = {"DATA_DIR": str(data_dir(seed)), **settings}
    process = subprocess.Popen(
        [VPX, "serve", "--port", str(port)],
        env=server_env(seed.database_url, **settings),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_LIMIT_S
        while True:
            if process.poll() is not None:
                error = process.stderr.read().decode(errors="replace") if process.stderr else ""
                raise RuntimeError(f"vpx serve exited with {process.returncode}: {error[-2000:]}")
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"vpx serve did not answer within {STARTUP_LIMIT_S} s")
            time.sleep(0.1)
        yield LiveServer(url=url, seed=seed, data_dir=Path(settings["DATA_DIR"]))
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()


@dataclass(frozen=True)
class Delivery:
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    """An HTTP server on loopback that answers 204 to every POST and keeps what it received."""

    def __init__(self) -> None:
        received: queue.Queue[Delivery] = queue.Queue()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                received.put(Delivery(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.received = received
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def next(self, *, timeout: float = 20.0) -> Delivery:
        """The next delivery; fails the test if none comes within ``timeout`` (a limit, not a measure)."""
        return self.received.get(timeout=timeout)
