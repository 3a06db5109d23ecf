"""The DROP cycle's clock: its status (`vpx drop status`, `vpx status`, the operator page, /metrics)
and the worker's round, which downloads when a pull is due, answers a batch once the operator's
hold for exemptions is over, and warns from the 40th day of an open batch (or of DROP not accessed).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from vpx.compliance.drop import cycle
from vpx.config import Settings
from vpx.db import Database
from vpx.models import DropState
from vpx.secrets import SecretBox

log = logging.getLogger("vpx.compliance")
# The law: DROP accessed at least every 45 days, each batch answered within 45 days of its download.
ACCESS_EVERY = timedelta(days=45)
WARN_FROM = timedelta(days=40)


def _days_left(deadline: datetime, now: datetime) -> float:
    return round((deadline - now).total_seconds() / 86_400, 2)


async def status(session: AsyncSession, settings: Settings, *, now: datetime) -> dict[str, Any]:
    """Where the cycle stands: the last download, when the next is due (the operator's interval) and
    when the law needs one at the latest, the open batch with its deadline, and what to worry about."""
    state = await session.get(DropState, 1)
    last_pull = state.last_pull_at if state is not None else None
    batch = await cycle.open_batch(session)
    open_batch = None
    warnings: list[str] = []
    if batch is not None:
        decided, exempted = await cycle.decided_count(session, batch.id)
        open_batch = {
            "id": batch.id,
            "file_name": batch.file_name,
            "downloaded_at": batch.downloaded_at,
            "deadline": batch.deadline,
            "days_left": _days_left(batch.deadline, now),
            "items": batch.items,
            "decided": decided,
            "exempted": exempted,
            "upload_attempts": batch.upload_attempts,
            "last_error": batch.last_error,
        }
        if now >= batch.downloaded_at + WARN_FROM:
            warnings.append(
                f"the batch downloaded {batch.downloaded_at:%Y-%m-%d} must be answered by {batch.deadline:%Y-%m-%d}"
            )
    must_access_by = last_pull + ACCESS_EVERY if last_pull is not None else None
    if last_pull is not None and must_access_by is not None and now >= last_pull + WARN_FROM:
        warnings.append(f"DROP was last accessed {last_pull:%Y-%m-%d}: the law needs it by {must_access_by:%Y-%m-%d}")
    return {
        "configured": bool(settings.drop_url),
        "lists": settings.drop_lists,
        "last_pull_at": last_pull,
        "next_pull_due": last_pull + timedelta(days=settings.drop_pull_days) if last_pull is not None else now,
        "must_access_by": must_access_by,
        "retry_at": state.retry_at if state is not None else None,
        "last_error": state.last_error if state is not None else None,
        "open_batch": open_batch,
        "warnings": warnings,
    }


class DropSchedule:
    """The worker's lane for DROP: looks once a minute, acts when something is due."""

    EVERY = timedelta(minutes=1)

    def __init__(self, database: Database, settings: Settings, box: SecretBox) -> None:
        self.database = database
        self.settings = settings
        self.box = box
        self.looked_at: datetime | None = None

    async def round(self, now: datetime) -> None:
        if not self.settings.drop_url or (self.looked_at is not None and now - self.looked_at < self.EVERY):
            return
        self.looked_at = now
        async with self.database.read_sessions() as session:
            found = await status(session, self.settings, now=now)
            state = await session.get(DropState, 1)
        await self._warn(found, state, now)
        batch = found["open_batch"]
        retry_at = found["retry_at"]
        if retry_at is not None and now < retry_at:
            return
        try:
            if batch is not None:
                if now >= batch["downloaded_at"] + timedelta(days=self.settings.drop_hold_days):
                    async with cycle.drop_client(self.database, self.settings, self.box) as client:
                        await cycle.report(self.database, client=client, now=now)
                return
            if now >= found["next_pull_due"]:
                async with cycle.drop_client(self.database, self.settings, self.box) as client:
                    pulled = await cycle.pull(self.database, client=client, now=now)
                    log.info("DROP downloaded", extra=pulled.as_dict())
                    if pulled.status == "downloaded" and pulled.items and not self.settings.drop_hold_days:
                        await cycle.report(self.database, client=client, now=now)
        except cycle.DropCycleError as exc:
            log.warning("the DROP cycle could not go on", extra={"code": exc.code, "error": str(exc)})

    async def _warn(self, found: dict[str, Any], state: DropState | None, now: datetime) -> None:
        """The deadline's warnings, logged once a day across processes."""
        if not found["warnings"]:
            return
        if state is not None and state.warned_at is not None and now - state.warned_at < timedelta(days=1):
            return
        for warning in found["warnings"]:
            log.warning("DROP deadline near: %s", warning)
        async with self.database.writer_turn(), self.database.write_sessions() as session, session.begin():
            (await cycle.state_of(session)).warned_at = now
