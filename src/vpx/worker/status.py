"""Whether background work is being done: workers' heartbeats and the age of the oldest work waiting,
for /readyz, `vpx status` and the server's start-up warning."""

from __future__ import annotations

import os
import socket
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.accounts.lifecycle import suspended
from vpx.db import Database
from vpx.models import BatchReveal, WebhookDelivery, WorkerHeartbeat

HEARTBEAT = timedelta(seconds=5)
# A worker that has not beaten for this long is taken for dead (a few missed beats: a busy event
# loop or a slow database may delay one).
ALIVE_WITHIN = timedelta(seconds=30)
# Forgotten after this long without a beat (a killed worker never removes its row).
FORGET_AFTER = timedelta(days=1)


async def beat(database: Database, *, worker_id: str, in_server: bool, started_at: datetime, now: datetime) -> None:
    """Records that the worker is alive (one row per worker, updated in place)."""
    async with database.write_sessions() as session, session.begin():
        updated = await session.execute(
            update(WorkerHeartbeat).where(WorkerHeartbeat.worker_id == worker_id).values(beat_at=now)
        )
        if updated.rowcount == 0:  # type: ignore[attr-defined]
            session.add(
                WorkerHeartbeat(
                    worker_id=worker_id,
                    host=socket.gethostname()[:255],
                    pid=os.getpid(),
                    in_server=in_server,
                    started_at=started_at,
                    beat_at=now,
                )
            )
            await session.execute(delete(WorkerHeartbeat).where(WorkerHeartbeat.beat_at < now - FORGET_AFTER))


async def forget(database: Database, *, worker_id: str) -> None:
    """A worker stopping cleanly removes its row."""
    async with database.write_sessions() as session, session.begin():
        await session.execute(delete(WorkerHeartbeat).where(WorkerHeartbeat.worker_id == worker_id))


async def live_workers(session: AsyncSession, now: datetime) -> int:
    return int(
        await session.scalar(
            select(func.count()).select_from(WorkerHeartbeat).where(WorkerHeartbeat.beat_at >= now - ALIVE_WITHIN)
        )
        or 0
    )


async def report(session: AsyncSession, now: datetime) -> dict[str, Any]:
    """Workers with their last beat, what waits (due webhook deliveries of accounts that are not
    suspended, batch reveals not finished) and the oldest of it; ``ready`` is false when work waits
    and no worker is alive to do it."""
    workers = [
        {
            "worker_id": row.worker_id,
            "host": row.host,
            "pid": row.pid,
            "in_server": row.in_server,
            "started_at": row.started_at,
            "last_beat_at": row.beat_at,
            "seconds_since_beat": round((now - row.beat_at).total_seconds(), 1),
            "alive": row.beat_at >= now - ALIVE_WITHIN,
        }
        for row in await session.scalars(select(WorkerHeartbeat).order_by(WorkerHeartbeat.worker_id))
    ]
    held = suspended(WebhookDelivery.account_id)
    deliveries = (
        await session.execute(
            select(func.count(), func.min(WebhookDelivery.created_at)).where(
                WebhookDelivery.status == "pending", WebhookDelivery.next_attempt_at <= now, ~held
            )
        )
    ).one()
    batches = (
        await session.execute(
            select(func.count(), func.min(BatchReveal.created_at)).where(BatchReveal.status == "processing")
        )
    ).one()
    oldest = min((t for t in (deliveries[1], batches[1]) if t is not None), default=None)
    alive = sum(1 for w in workers if w["alive"])
    waiting = int(deliveries[0] or 0) + int(batches[0] or 0)
    return {
        "ready": alive > 0 or waiting == 0,
        "live_workers": alive,
        "workers": workers,
        "waiting": {"webhook_deliveries": int(deliveries[0] or 0), "batch_reveals": int(batches[0] or 0)},
        "oldest_waiting_seconds": round((now - oldest).total_seconds(), 1) if oldest is not None else None,
    }
