"""PostgreSQL LISTEN, kept open: the one way a process hears what other processes committed (webhook
workers woken for new deliveries, signal streams for new signals)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import asyncpg
from sqlalchemy.engine import make_url

RETRY_SECONDS = 5.0


async def listen_until(
    database_url: str,
    channel: str,
    on_notify: Callable[[], None],
    stopping: asyncio.Event,
    *,
    log: logging.Logger,
    on_connect: Callable[[], None] | None = None,
) -> None:
    """Calls ``on_notify`` for every notification on ``channel`` until ``stopping`` is set; a lost
    connection is reopened every ``RETRY_SECONDS`` (callers poll meanwhile). ``on_connect`` runs
    each time the connection is (re)opened, for what committed while nobody listened."""
    dsn = make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)
    while not stopping.is_set():
        connection: asyncpg.Connection | None = None
        try:
            connection = await asyncpg.connect(dsn)
            closed = asyncio.Event()
            connection.add_termination_listener(lambda _c, lost=closed: lost.set())
            await connection.add_listener(channel, lambda *_args: on_notify())
            if on_connect is not None:
                on_connect()
            stop = asyncio.create_task(stopping.wait())
            lost = asyncio.create_task(closed.wait())
            await asyncio.wait({stop, lost}, return_when=asyncio.FIRST_COMPLETED)
            stop.cancel()
            lost.cancel()
        except (OSError, asyncpg.PostgresError) as exc:
            log.warning(f"LISTEN {channel} connection failed; polling meanwhile", extra={"error": str(exc)})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), timeout=RETRY_SECONDS)
        finally:
            if connection is not None and not connection.is_closed():
                with contextlib.suppress(Exception):
                    await connection.close(timeout=2)
