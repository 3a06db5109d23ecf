"""A real uvicorn server in a child process, for the browser tests and the export memory test."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.conftest import TEST_SECRET_KEY

STARTUP_LIMIT_S = 60.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class LiveServer:
    url: str
    pid: int

    def peak_rss_kib(self) -> int:
        """The server process's peak resident memory so far (VmHWM), in KiB."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        raise RuntimeError("no VmHWM in /proc status")

    def reset_peak_rss(self) -> None:
        """Start a new peak measurement (Linux: writing 5 to clear_refs resets VmHWM)."""
        Path(f"/proc/{self.pid}/clear_refs").write_text("5")


@contextmanager
def live_server(database_url: str, *, port: int | None = None, **settings: str) -> Iterator[LiveServer]:
    """Serves ``vpx.app:create_app`` on a loopback port (a free one unless given) until the block ends."""
    port = port or free_port()
    env = {
        **os.environ,
        "VPX_DATABASE_URL": database_url,
        "VPX_SECRET_KEYS": TEST_SECRET_KEY,
        "VPX_LOG_LEVEL": "WARNING",
        "VPX_RATE_LIMIT": "100000/minute",
        "VPX_AUTH_FAILURE_RATE_LIMIT": "100000/minute",
        **{f"VPX_{name.upper()}": value for name, value in settings.items()},
    }
    env.pop("VPX_REDIS_URL", None)
    command = [sys.executable, "-m", "uvicorn", "--factory", "vpx.app:create_app"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--no-access-log", "--log-level", "warning"]
    process = subprocess.Popen(command, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_LIMIT_S
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited with {process.returncode} before answering")
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not answer within {STARTUP_LIMIT_S} s")
            time.sleep(0.1)
        yield LiveServer(url=url, pid=process.pid)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
