"""The worker's compliance lane: the DROP cycle on its schedule, Do-Not-Call data aging out after 31
days, privacy requests deleted 24 months after receipt, the unsubscribe links of deleted sequences
after their 31 days. Each on its interval, never in a tight loop."""

from __future__ import annotations

from datetime import datetime, timedelta

from vpx.compliance.dnc import service as dnc_service
from vpx.compliance.drop.schedule import DropSchedule
from vpx.compliance.privacy import service as privacy_service
from vpx.config import Settings
from vpx.db import Database
from vpx.secrets import SecretBox
from vpx.sequences import links

DNC_EVERY = timedelta(minutes=10)
PURGE_EVERY = timedelta(hours=1)


class ComplianceLane:
    def __init__(self, database: Database, settings: Settings, box: SecretBox) -> None:
        self.database = database
        self.drop = DropSchedule(database, settings, box)
        self._dnc_at: datetime | None = None
        self._purged_at: datetime | None = None

    async def round(self, now: datetime) -> int:
        await self.drop.round(now)
        if self._dnc_at is None or now - self._dnc_at >= DNC_EVERY:
            self._dnc_at = now
            await dnc_service.refresh_freshness(self.database, now=now)
        if self._purged_at is None or now - self._purged_at >= PURGE_EVERY:
            self._purged_at = now
            async with self.database.writer_turn(), self.database.write_sessions() as session, session.begin():
                await privacy_service.purge_expired(session, now=now)
                await links.purge(session, now=now)
        return 0
