"""`vpx worker`: the background worker as its own process (D26), for production on PostgreSQL; run
as many as you like next to the servers."""

from __future__ import annotations

import asyncio
import signal
from typing import Annotated

import typer

from vpx.cli.output import JsonOption, emit
from vpx.config import Settings, get_settings
from vpx.db import Database
from vpx.worker.loop import Worker, default_worker_id


def worker(
    in_flight: Annotated[int, typer.Option(min=1, max=5000, help="Deliveries sent at once, at most.")] = 200,
    worker_id: Annotated[str | None, typer.Option("--id", help="Name in leases and logs.")] = None,
    as_json: bool = JsonOption,
) -> None:
    """Do the background work until stopped: webhooks, batch reveals and enrichments, sequences and
    mailboxes, search changes, scheduled sources, email checks, refunds (SIGTERM or Ctrl-C finish the
    round in hand); test mode's too, on its own database."""
    settings = get_settings()
    name = worker_id or default_worker_id()
    emit({"status": "working", "worker_id": name, "max_in_flight": in_flight}, as_json=as_json)

    async def run() -> None:
        database = Database(settings)
        job = Worker(database, settings, worker_id=name, max_in_flight=in_flight)
        test_mode = TestModeWork(settings, worker_id=name, max_in_flight=in_flight)
        loop = asyncio.get_running_loop()

        def stop() -> None:
            job.stop()
            test_mode.stop()

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop)
        try:
            await asyncio.gather(job.run(), test_mode.run())
        finally:
            await database.dispose()

    asyncio.run(run())


class TestModeWork:
    """Test mode's background work (vpx.sandbox): a second worker on the sandbox database, once the
    first test key has made it (looked for every ``WAIT_SECONDS`` until then); none with test mode off."""

    __test__ = False  # not a test class, whatever its name
    WAIT_SECONDS = 30.0

    def __init__(self, settings: Settings, *, worker_id: str, max_in_flight: int) -> None:
        self.settings = settings
        self.worker_id = f"{worker_id}-sandbox"
        self.max_in_flight = max_in_flight
        self.stopping = asyncio.Event()
        self.worker: Worker | None = None

    def stop(self) -> None:
        self.stopping.set()
        if self.worker is not None:
            self.worker.stop()

    async def run(self) -> None:
        from vpx.sandbox import location

        if not self.settings.test_mode:
            return
        sandbox = location.sandbox_settings(self.settings)
        while not await location.exists(sandbox):
            try:
                await asyncio.wait_for(self.stopping.wait(), timeout=self.WAIT_SECONDS)
                return
            except TimeoutError:
                continue
        database = Database(sandbox, livemode=False)
        self.worker = Worker(database, sandbox, worker_id=self.worker_id, max_in_flight=self.max_in_flight)
        if self.stopping.is_set():
            self.worker.stop()
        try:
            await self.worker.run()
        finally:
            await database.dispose()
