"""What the operator's source routes take and answer."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SourceState = Literal["active", "paused", "failing"]


class RunError(BaseModel):
    code: str = Field(description="Stable snake_case: `rate_limited`, `server_error`, `unexpected_layout`, …")
    message: str


class RunFile(BaseModel):
    name: str
    url: str | None
    status: str = Field(description="`applied`, `not_modified` or `skipped`.")
    note: str | None
    file_date: str | None
    rows_read: int
    created: int
    updated: int
    deactivated: int
    unchanged: int
    ingested: int
    duplicates: int
    skipped: dict[str, int]


class AppliedRun(BaseModel):
    """The last run that applied something, as a later run that did not keeps it."""

    started_at: datetime | None
    finished_at: datetime | None
    rows_read: int
    created: int
    updated: int
    deactivated: int
    unchanged: int
    ingested: int
    duplicates: int
    newest_record_at: datetime | None


class RunReport(BaseModel):
    source: str
    kind: str
    status: Literal["ok", "not_modified", "failed"]
    started_at: datetime | None
    finished_at: datetime | None
    seconds: float | None
    requests: int = Field(description="HTTP requests the run made (an unchanged source: one).")
    bytes_downloaded: int
    rows_read: int
    created: int
    updated: int
    deactivated: int
    unchanged: int
    ingested: int = Field(description="Signals ingested (permit sources).")
    duplicates: int
    skipped: dict[str, int]
    newest_record_at: datetime | None
    files: list[RunFile]
    error: RunError | None
    last_applied: AppliedRun | None = Field(
        default=None,
        description="When this run found nothing new (`not_modified`) or failed: the last run that applied "
        "something (a run of the worker's just before, say), when it ran and what it did; null otherwise.",
    )


class SourceTotals(BaseModel):
    runs_ok: int
    runs_not_modified: int
    runs_failed: int
    rows_created: int
    rows_updated: int
    rows_deactivated: int


class Source(BaseModel):
    name: str
    kind: str
    url: str = Field(description="A password in it is shown as `***`.")
    every: str = Field(description="The interval: `30m`, `6h`, `1d`, `1w`.")
    state: SourceState = Field(description="`failing` from a failed run until the next success.")
    stale: bool = Field(description="Its last success (or its addition) is older than twice its interval.")
    running: bool = Field(description="A run holds it now.")
    run_requested: bool
    last_success_at: datetime | None
    age_seconds: float | None = Field(description="Seconds since the last success.")
    newest_record_at: datetime | None = Field(
        description="The newest record's own date: a registry file's publication day, a permit's date."
    )
    next_run_at: datetime | None = Field(description="Null while paused.")
    last_run: RunReport | None
    last_error: str | None
    consecutive_failures: int
    options: dict[str, str] = Field(description="Secret options are shown as `(secret)`.")
    mapping: str | None = Field(description="The mapping's name (permit sources).")
    totals: SourceTotals
    created_at: datetime


class SourceList(BaseModel):
    sources: list[Source]


class SourceRemoved(Source):
    removed: bool = True


class SourceCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        min_length=1, max_length=63, description="1-63 lower-case letters, digits, `-` or `_`.", examples=["nppes"]
    )
    kind: str = Field(
        max_length=40,
        description="`nppes`, `nucc`, `cslb`, `edgar-daily`, `permits-csv`, `permits-socrata` or `permits-arcgis`.",
        examples=["nppes"],
    )
    url: str = Field(
        min_length=1,
        max_length=2000,
        description="Where the publisher publishes; loopback and private addresses are allowed.",
        examples=["https://download.cms.gov/nppes/NPI_Files.html"],
    )
    every: str | None = Field(
        default=None, max_length=10, description="`30m`, `6h`, `1d`, `1w`…, at least `1m`; default: the kind's."
    )
    mapping: str | None = Field(
        default=None,
        max_length=65_536,
        description="A permit mapping (TOML text), as `vpx signals import permits --mapping` reads it.",
    )
    mapping_name: str | None = Field(
        default=None,
        max_length=100,
        description="The mapping's name (its file's name without .toml); default: the source's name.",
    )
    options: dict[str, str] = Field(
        default_factory=dict,
        max_length=50,
        description="The kind's options, and the limits every kind takes (`max_download`, `max_unpacked`, "
        "`max_ratio`, `max_line`, `max_run_time`, `stall_timeout`: see the operator guide); secret ones are never "
        "shown back.",
    )
