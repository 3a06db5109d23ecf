"""Worker heartbeats: which background workers are alive, for /readyz and `vpx status`."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, UtcDateTime


class WorkerHeartbeat(Base):
    __tablename__ = "worker_heartbeats"

    worker_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    in_server: Mapped[bool] = mapped_column(Boolean)  # inside a `vpx serve` process, or a `vpx worker`
    started_at: Mapped[datetime] = mapped_column(UtcDateTime())
    beat_at: Mapped[datetime] = mapped_column(UtcDateTime())
