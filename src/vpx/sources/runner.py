"""Running sources: a run claims its source with a lease (one run per source at a time, across
processes; a killed run's lease expires after VPX_WORKER_LEASE_SECONDS and the source is run again),
renews it while it works, lets the kind fetch and import within the source's limits (a run past its
``max_run_time`` is stopped), then records the outcome: the report, the freshness, the next run. A
failed run leaves the source ``failing`` at once, with the reason; its retries back off (a few
minutes, doubling, up to its interval) so a broken publisher is never asked in a tight loop; the next
success clears it. A worker runs up to RUNS_AT_ONCE sources at a time, so that a slow one never holds
back the others."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import or_, select, update

from vpx.clock import Clock
from vpx.config import Settings
from vpx.db import Database
from vpx.models import DataSource
from vpx.outbound.resolver import Resolver, system_resolver
from vpx.registries.reader import ImportFailed
from vpx.secrets import SecretBox
from vpx.signals.sources.permit_mapping import MappingError
from vpx.sources import fetch
from vpx.sources import service as source_service
from vpx.sources.egress import Egress
from vpx.sources.job import Job, RunReport, SourceConfig, last_applied
from vpx.sources.kinds import all_kinds
from vpx.sources.limits import Limits, format_seconds
from vpx.worker import wakeup

log = logging.getLogger("vpx.sources")
# A failing source is tried again after this (or its interval, if shorter), doubling each failure…
FIRST_RETRY = timedelta(minutes=5)
# … up to its interval, or an hour for sources run more often than that.
LONGEST_RETRY = timedelta(hours=1)
# A run that took longer than its source's interval leaves at least this before the next one.
LEAST_GAP = timedelta(minutes=1)
# The worker looks for stale sources this often.
STALE_CHECK_EVERY = timedelta(minutes=1)
# Sources one worker process runs at once: while one is slow (a large file, a publisher that
# trickles), the others that come due still run.
RUNS_AT_ONCE = 4


class SourceBusy(Exception):
    """Another process holds the source's lease: it is being run."""

    def __init__(self, name: str, owner: str | None, until: datetime | None) -> None:
        held = f" by {owner}" if owner else ""
        when = f" (its lease runs until {until:%Y-%m-%d %H:%M:%S} UTC)" if until else ""
        super().__init__(f"source {name} is being run{held}{when}; wait for that run to end")


def next_after_success(every: timedelta, started: datetime, finished: datetime) -> datetime:
    return max(started + every, finished + min(every, LEAST_GAP))


def next_after_failure(every: timedelta, failures: int, finished: datetime) -> datetime:
    """Backs off: min(interval, 5 min), doubled each consecutive failure, at most the interval (an
    hour at least)."""
    first = min(every, FIRST_RETRY)
    longest = max(every, LONGEST_RETRY)
    doubled: int = 2 ** min(max(failures - 1, 0), 20)
    delay = min(first * doubled, longest)
    return finished + delay


async def claim(database: Database, *, source_id: int, owner: str, now: datetime, lease: timedelta) -> bool:
    """Takes the source's lease unless another run holds an unexpired one (the worker's claim with a
    lease, as deliveries are claimed: D26)."""
    async with database.write_sessions() as session, session.begin():
        done = await session.execute(
            update(DataSource)
            .where(
                DataSource.id == source_id,
                or_(DataSource.lease_until.is_(None), DataSource.lease_until <= now),
            )
            .values(lease_owner=owner, lease_until=now + lease)
        )
        return bool(done.rowcount == 1)  # type: ignore[attr-defined]


async def _renew(database: Database, *, source_id: int, owner: str, clock: Clock, lease: timedelta) -> bool:
    async with database.write_sessions() as session, session.begin():
        done = await session.execute(
            update(DataSource)
            .where(DataSource.id == source_id, DataSource.lease_owner == owner)
            .values(lease_until=clock.now() + lease)
        )
        return bool(done.rowcount == 1)  # type: ignore[attr-defined]


async def _keep_lease(database: Database, *, source_id: int, owner: str, clock: Clock, lease: timedelta) -> None:
    """Renews the lease every third of its length while the run works."""
    while True:
        await asyncio.sleep(max(lease.total_seconds() / 3, 0.05))
        try:
            if not await _renew(database, source_id=source_id, owner=owner, clock=clock, lease=lease):
                log.warning("a source run lost its lease", extra={"source_id": source_id, "owner": owner})
                return
        except Exception:
            log.exception("renewing a source's lease failed", extra={"source_id": source_id})


def http_client(policy: fetch.RetryPolicy) -> httpx.AsyncClient:
    timeout = httpx.Timeout(policy.connect_timeout, read=policy.read_timeout)
    # The fetcher follows redirects itself, one hop at a time, each checked (vpx.sources.egress).
    return httpx.AsyncClient(follow_redirects=False, timeout=timeout)


async def run_source(
    database: Database,
    settings: Settings,
    *,
    name: str,
    owner: str,
    box: SecretBox,
    clock: Clock | None = None,
    policy: fetch.RetryPolicy | None = None,
    resolver: Resolver = system_resolver,
) -> RunReport:
    """Runs the named source now, paused or not (`vpx sources run`). NotFound for an unknown name;
    SourceBusy when another run holds it."""
    clock = clock or Clock()
    async with database.read_sessions() as session:
        source = await source_service.get_source(session, name)
    lease = timedelta(seconds=settings.worker_lease_seconds)
    if not await claim(database, source_id=source.id, owner=owner, now=clock.now(), lease=lease):
        async with database.read_sessions() as session:
            held = await source_service.get_source(session, name)
        raise SourceBusy(name, held.lease_owner, held.lease_until)
    return await _run_claimed(
        database, settings, source_id=source.id, owner=owner, box=box, clock=clock, policy=policy, resolver=resolver
    )


_stale_checked_at: datetime | None = None


async def _warn_stale_now_and_then(database: Database, now: datetime) -> None:
    global _stale_checked_at
    if _stale_checked_at is None or not timedelta(0) <= now - _stale_checked_at < STALE_CHECK_EVERY:
        _stale_checked_at = now
        await warn_stale(database, now=now)


async def worker_round(
    database: Database,
    settings: Settings,
    *,
    owner: str,
    box: SecretBox,
    clock: Clock,
    stopping: asyncio.Event | None = None,
) -> int:
    """The worker's sources lane: stale sources warned of (once a minute at most), and the due
    sources run, up to RUNS_AT_ONCE at a time. While some run, sources that come due (or are asked
    for) start as soon as there is room, so that a slow run never holds back the others. Returns
    once nothing runs and nothing more is due (nothing new starts once ``stopping`` is set); how many
    ran."""
    woken = wakeup.register()
    running: set[asyncio.Task[RunReport]] = set()
    ran = 0
    try:
        while True:
            woken.clear()
            await _warn_stale_now_and_then(database, clock.now())
            room = RUNS_AT_ONCE - len(running)
            if room > 0 and not (stopping is not None and stopping.is_set()):
                for source_id in await _claim_due(database, settings, owner=owner, now=clock.now(), most=room):
                    run = _run_claimed(database, settings, source_id=source_id, owner=owner, box=box, clock=clock)
                    running.add(asyncio.create_task(run))
                    ran += 1
            if not running:
                return ran
            waking = asyncio.ensure_future(woken.wait())
            try:
                done, _ = await asyncio.wait(
                    {*running, waking}, timeout=settings.worker_poll_seconds, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                waking.cancel()
            for task in done & running:
                running.discard(task)
                if not task.cancelled() and task.exception() is not None:
                    log.error("a source run ended in error", exc_info=task.exception())
    finally:
        wakeup.unregister(woken)
        for task in running:
            task.cancel()  # the lane itself was cancelled: its runs are recorded as interrupted
        await asyncio.gather(*running, return_exceptions=True)


async def run_due(
    database: Database,
    settings: Settings,
    *,
    owner: str,
    box: SecretBox,
    clock: Clock | None = None,
    policy: fetch.RetryPolicy | None = None,
) -> int:
    """One due source claimed and run to its end; returns how many ran (0 or 1)."""
    clock = clock or Clock()
    for source_id in await _claim_due(database, settings, owner=owner, now=clock.now(), most=1):
        await _run_claimed(database, settings, source_id=source_id, owner=owner, box=box, clock=clock, policy=policy)
        return 1
    return 0


async def _claim_due(database: Database, settings: Settings, *, owner: str, now: datetime, most: int) -> list[int]:
    """Up to ``most`` due sources (asked for, or their time come) claimed, the longest due first."""
    async with database.read_sessions() as session:
        due = list(
            await session.scalars(
                select(DataSource.id)
                .where(
                    or_(
                        DataSource.run_requested.is_(True),
                        DataSource.paused.is_(False) & (DataSource.next_run_at <= now),
                    ),
                    or_(DataSource.lease_until.is_(None), DataSource.lease_until <= now),
                )
                .order_by(DataSource.next_run_at)
                .limit(most + 10)
            )
        )
    lease = timedelta(seconds=settings.worker_lease_seconds)
    claimed: list[int] = []
    for source_id in due:
        if len(claimed) < most and await claim(database, source_id=source_id, owner=owner, now=now, lease=lease):
            claimed.append(source_id)
    return claimed


async def _run_claimed(
    database: Database,
    settings: Settings,
    *,
    source_id: int,
    owner: str,
    box: SecretBox,
    clock: Clock,
    policy: fetch.RetryPolicy | None = None,
    resolver: Resolver = system_resolver,
) -> RunReport:
    started = clock.now()
    async with database.read_sessions() as session:
        source = await session.get(DataSource, source_id)
        assert source is not None
        config = source_service.config_of(source, box)
        watermark: dict[str, Any] = dict(source.watermark or {})
    report = RunReport(source=config.name, kind=config.kind, started_at=started)
    chosen = policy or fetch.DEFAULT_POLICY
    lease = timedelta(seconds=settings.worker_lease_seconds)
    keeper = asyncio.create_task(_keep_lease(database, source_id=source_id, owner=owner, clock=clock, lease=lease))
    log.info("source run started", extra={"source": config.name, "kind": config.kind, "owner": owner})
    try:
        async with http_client(chosen) as client:
            fetcher = fetch.Fetcher(client, policy=chosen, egress=Egress(config.url, resolver=resolver))
            job = Job(
                config=config,
                watermark=watermark,
                fetcher=fetcher,
                database=database,
                settings=settings,
                clock=clock,
                owner=owner,
                report=report,
            )
            try:
                fetcher.limits = _limits_of(config)
                report.status = await _run_in_time(job, config)
            except (fetch.SourceFailed, ImportFailed, MappingError) as exc:
                report.status = "failed"
                report.error = {"code": exc.code, "message": str(exc)}
            except Exception as exc:
                log.exception("a source run failed unexpectedly", extra={"source": config.name})
                report.status = "failed"
                report.error = {"code": "internal_error", "message": f"{type(exc).__name__}: {exc}"}
            finally:
                report.requests = fetcher.requests
                report.bytes_downloaded = fetcher.bytes_downloaded
    finally:
        keeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keeper
        report.finished_at = clock.now()
        if report.status == "running":  # cancelled half-way (the process stopping)
            report.status = "failed"
            report.error = {"code": "interrupted", "message": "the run was stopped before it ended"}
        await _record(database, source_id=source_id, owner=owner, report=report)
    level = logging.WARNING if report.status == "failed" else logging.INFO
    log.log(
        level,
        "source run %s",
        report.status,
        extra={"source": config.name, "error": report.error, "rows_read": report.rows_read},
    )
    return report


def _limits_of(config: SourceConfig) -> Limits:
    try:
        return Limits.of(config.options)
    except ValueError as exc:
        raise fetch.SourceFailed(
            f"a limit of source {config.name} does not read: {exc}", code="invalid_option"
        ) from None


async def _run_in_time(job: Job, config: SourceConfig) -> str:
    """The kind's run, stopped once it has taken the source's ``max_run_time`` (SourceFailed,
    ``run_timeout``): the work in threads told to stop, what it was writing removed."""
    deadline = asyncio.timeout(job.limits.max_run_time)
    try:
        async with deadline:
            return await _run_kind(job, config)
    except TimeoutError:
        if not deadline.expired():
            raise
        raise fetch.SourceFailed(
            f"the run was stopped after {format_seconds(job.limits.max_run_time)}, the longest this source's runs "
            "may take (max_run_time); what it saved stays and the next run goes on from there",
            code="run_timeout",
        ) from None


async def _run_kind(job: Job, config: SourceConfig) -> str:
    kinds = all_kinds()
    if config.kind not in kinds:
        raise fetch.SourceFailed(f"this version of vpx has no source kind {config.kind!r}", code="unknown_kind")
    return await kinds[config.kind]().run(job)


async def _record(database: Database, *, source_id: int, owner: str, report: RunReport) -> None:
    """The outcome written and the lease let go, unless another process took the source over."""
    assert report.started_at is not None and report.finished_at is not None
    finished = report.finished_at
    async with database.write_sessions() as session, session.begin():
        source = await session.scalar(
            select(DataSource).where(DataSource.id == source_id, DataSource.lease_owner == owner).with_for_update()
        )
        if source is None:
            return  # removed meanwhile, or taken over after the lease ran out
        every = timedelta(seconds=source.every_seconds)
        if report.status != "ok":
            report.last_applied = last_applied(source.last_run)
        source.last_run = report.as_dict()
        source.last_run_at = report.started_at
        source.run_requested = False
        source.lease_owner = None
        source.lease_until = None
        source.updated_at = finished
        source.rows_created += report.created
        source.rows_updated += report.updated
        source.rows_deactivated += report.deactivated
        if report.status == "failed":
            assert report.error is not None
            source.runs_failed += 1
            source.consecutive_failures += 1
            source.last_error = report.error["message"]
            source.next_run_at = next_after_failure(every, source.consecutive_failures, finished)
            return
        if report.status == "ok":
            source.runs_ok += 1
        else:
            source.runs_not_modified += 1
        source.consecutive_failures = 0
        source.last_error = None
        source.last_success_at = finished
        source.stale_warned = False
        if report.newest_record_at is not None and (
            source.newest_record_at is None or report.newest_record_at > source.newest_record_at
        ):
            source.newest_record_at = report.newest_record_at
        source.next_run_at = next_after_success(every, report.started_at, finished)


async def warn_stale(database: Database, *, now: datetime) -> list[str]:
    """Logs a warning, once until its next success, for each scheduled source older than twice its
    interval; returns their names."""
    async with database.read_sessions() as session:
        candidates = list(
            await session.scalars(
                select(DataSource).where(DataSource.paused.is_(False), DataSource.stale_warned.is_(False))
            )
        )
    stale = [s for s in candidates if source_service.is_stale(s, now)]
    if not stale:
        return []
    async with database.write_sessions() as session, session.begin():
        await session.execute(
            update(DataSource).where(DataSource.id.in_([s.id for s in stale])).values(stale_warned=True)
        )
    for source in stale:
        log.warning(
            "source %s is stale: its last success is older than twice its interval (%s)",
            source.name,
            source_service.format_every(source.every_seconds),
            extra={
                "source": source.name,
                "last_success_at": source.last_success_at.isoformat() if source.last_success_at else None,
                "last_error": source.last_error,
            },
        )
    return [s.name for s in stale]
