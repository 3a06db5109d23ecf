"""The real `vpx` command as child processes for the fault tests: started with the test database's
settings, killed with SIGKILL, started again."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path

import httpx

from tests.conftest import TEST_SECRET_KEY
from tests.dashboard.live_server import free_port

VPX = str(Path(sys.executable).with_name("vpx"))
STARTUP_LIMIT_S = 30.0


class VpxProcess:
    """One `vpx …` child process with the tests' environment and ``settings`` (VPX_<NAME> variables);
    its output goes to a file (a full pipe would stall it)."""

    def __init__(self, database_url: str, args: list[str], log: Path, settings: Mapping[str, str]) -> None:
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
        self.log = log
        with log.open("ab") as out:
            self.process = subprocess.Popen([VPX, *args, "--json"], env=env, stdout=out, stderr=out)

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def kill(self) -> None:
        """SIGKILL: no shutdown, no cleanup; leases and open transactions are left as they were."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        assert self.process.returncode == -signal.SIGKILL, self.output()

    def stop(self) -> int:
        """SIGTERM and wait (SIGKILL if it does not end in time); returns the exit code."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


class VpxServer(VpxProcess):
    """`vpx serve` on a free loopback port, answering /healthz before the constructor returns."""

    def __init__(
        self, database_url: str, log: Path, settings: Mapping[str, str] | None = None, *, port: int | None = None
    ) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        super().__init__(database_url, ["serve", "--port", str(self.port)], log, settings or {})
        deadline = time.monotonic() + STARTUP_LIMIT_S
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"vpx serve exited with {self.process.returncode}: {self.output()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"vpx serve did not answer within {STARTUP_LIMIT_S} s: {self.output()}")
            time.sleep(0.05)


async def wait_until(condition: Callable[[], Awaitable[bool]], *, limit: float, every: float = 0.05) -> bool:
    """Polls ``condition`` until it holds or ``limit`` seconds have passed; returns whether it held."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if await condition():
            return True
        await asyncio.sleep(every)
    return await condition()
