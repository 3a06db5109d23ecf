"""`vpx worker`: the background worker as its own process (D26), for production on PostgreSQL; run
as many as you like next to the servers."""

from __future__ import annotations

import asyncio
import signal
from typing import Annotated

import typer

from vpx.cli.output import JsonOption, emit
from vpx.config import get_settings
from vpx.db import Database
from vpx.worker.loop import Worker, default_worker_id


def worker(
    in_flight: Annotated[int, typer.Option(min=1, max=5000, help="Deliveries sent at once, at most.")] = 200,
    worker_id: Annotated[str | None, typer.Option("--id", help="Name in leases and logs.")] = None,
    as_json: bool = JsonOption,
) -> None:
    """Do the background work until stopped: webhooks, batch reveals and enrichments, sequences and
    mailboxes, search changes, scheduled sources, email checks, refunds (SIGTERM or Ctrl-C finish the
    round in hand)."""
    settings = get_settings()
    name = worker_id or default_worker_id()
    emit({"status": "working", "worker_id": name, "max_in_flight": in_flight}, as_json=as_json)

    async def run() -> None:
        database = Database(settings)
        job = Worker(database, settings, worker_id=name, max_in_flight=in_flight)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, job.stop)
        try:
            await job.run()
        finally:
            await database.dispose()

    asyncio.run(run())
