"""What an ingest hands each of its hooks (``vpx.signals.hooks``): the shape of a hook and the context
it runs in. The hooks (webhooks, the stream, auto-buy) import this module, never the list that names
them, so the list can import them all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import Clock
from vpx.config import Settings
from vpx.signals.records import SignalRecord


@dataclass(frozen=True)
class HookContext:
    settings: Settings
    clock: Clock
    # "sqlite" or "postgresql": PostgreSQL notifications are transactional, SQLite's wake-ups happen
    # in-process after commit.
    dialect: str
    # The ingest's timestamp (the signals' created_at); None: the clock's time.
    at: datetime | None = None

    @property
    def now(self) -> datetime:
        return self.at if self.at is not None else self.clock.now()


IngestHook = Callable[[AsyncSession, Sequence[SignalRecord], HookContext], Awaitable[None]]
