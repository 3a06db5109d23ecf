"""The publishers' sources the worker keeps in sync (vpx.sources): each with its schedule, its lease,
its watermark and what its last runs did."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from vpx.db import Base, BigIntPK, UtcDateTime


class DataSource(Base):
    __tablename__ = "data_sources"
    __table_args__ = (Index(None, "next_run_at"),)

    id: Mapped[int] = mapped_column(BigIntPK, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(63), unique=True)
    kind: Mapped[str] = mapped_column(String(40))
    url: Mapped[str] = mapped_column(Text)
    every_seconds: Mapped[int] = mapped_column(Integer)
    # Options in clear, and those the kind calls secret sealed as one JSON object (vpx.secrets).
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    options_sealed: Mapped[str | None] = mapped_column(Text)
    # A permit mapping's TOML text, kept whole: the file it was read from may move or change.
    mapping: Mapped[str | None] = mapped_column(Text)
    mapping_name: Mapped[str | None] = mapped_column(String(100))
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    # An operator asked for a run now (the admin API): the worker takes it even while paused.
    run_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    next_run_at: Mapped[datetime] = mapped_column(UtcDateTime())
    # One run per source at a time, across processes: whoever holds an unexpired lease runs it.
    lease_owner: Mapped[str | None] = mapped_column(String(200))
    lease_until: Mapped[datetime | None] = mapped_column(UtcDateTime())
    # What the kind has committed so far (validators, files applied, last record seen); written only
    # after the data it stands for is committed.
    watermark: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    last_run: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    last_run_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    last_success_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    newest_record_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    # The "older than twice its interval" warning is logged once, until the next success.
    stale_warned: Mapped[bool] = mapped_column(Boolean, default=False)
    # Totals since the source was added (Prometheus reads them from here, whichever process ran).
    runs_ok: Mapped[int] = mapped_column(Integer, default=0)
    runs_not_modified: Mapped[int] = mapped_column(Integer, default=0)
    runs_failed: Mapped[int] = mapped_column(Integer, default=0)
    rows_created: Mapped[int] = mapped_column(BigInteger, default=0)
    rows_updated: Mapped[int] = mapped_column(BigInteger, default=0)
    rows_deactivated: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime())
