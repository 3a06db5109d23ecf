"""The worker's loop: a few lanes that each deliver due webhooks, one that runs batch reveals, and on
PostgreSQL a LISTEN connection that wakes them the moment an event commits anywhere.

It runs inside the server on the embedded default (started from the app's lifespan) and as
``vpx worker`` processes in production; any number may run at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta

from vpx.auth.ratelimit import RateLimits
from vpx.batches import service as batch_service
from vpx.clock import Clock
from vpx.compliance.lane import ComplianceLane
from vpx.config import Settings
from vpx.contacts.search import checks as search_checks
from vpx.contacts.search import postings as search_postings
from vpx.db import Database
from vpx.deliverability.service import EmailChecks
from vpx.enrichment import batch as enrichment_batches
from vpx.enrichment import build_waterfall, close_waterfall
from vpx.enrichment.waterfall import Waterfall
from vpx.listen import listen_until
from vpx.outbound.resolver import Resolver, system_resolver
from vpx.quality import bounces as quality_bounces
from vpx.secrets import SecretBox, load_box
from vpx.sequences import replies as sequence_replies
from vpx.sequences import sending as sequence_sending
from vpx.sources import runner as source_runner
from vpx.suppression import sweep as suppression_sweep
from vpx.visitors import service as visitor_service
from vpx.webhooks.outbox import NOTIFY_CHANNEL
from vpx.webhooks.sender import WebhookSender
from vpx.worker import status as worker_status
from vpx.worker import wakeup
from vpx.worker.deliveries import ClaimedDelivery, claim_deliveries, send_claimed

log = logging.getLogger("vpx.worker")
# How often the worker looks for visits past their retention (D33).
PURGE_EVERY = timedelta(minutes=10)


def default_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{os.urandom(3).hex()}"


class Worker:
    """One worker process's loops: a dispatcher that claims due deliveries while it has room for
    them in flight (``max_in_flight``), sending each claimed batch in a task of its own; a loop that
    runs batch reveals; and, on PostgreSQL, the LISTEN connection. One claimer per process keeps a
    notification from setting off a herd of claims."""

    def __init__(
        self,
        database: Database,
        settings: Settings,
        *,
        clock: Clock | None = None,
        resolver: Resolver = system_resolver,
        worker_id: str | None = None,
        max_in_flight: int = 200,
        enrichment: tuple[Waterfall, SecretBox] | None = None,
    ) -> None:
        self.database = database
        # Batch enrichments (D32): the server's waterfall when the worker runs inside it, else its own.
        self.enrichment = enrichment
        self.settings = settings
        self.clock = clock or Clock()
        self.resolver = resolver
        self.worker_id = worker_id or default_worker_id()
        self.max_in_flight = max_in_flight
        self._purged_at: datetime | None = None
        self._swept_at: datetime | None = None
        self._checked_at: datetime | None = None
        self._compliance_lane: ComplianceLane | None = None
        # Wrong terms of the search index already logged by this process: each is logged once.
        self._told_wrong: set[tuple[str, int]] = set()
        self.in_flight = 0
        self.stopping = asyncio.Event()
        self.in_server = False  # set by InProcessWorker: shown in /readyz and `vpx status`
        # The catalogue's email checks (vpx.deliverability): MX look-ups at the operator's pace.
        self.email_checks = EmailChecks.from_settings(database, settings, clock=self.clock)

    def stop(self) -> None:
        self.stopping.set()

    async def run(self) -> None:
        """Runs until ``stop()``; deliveries in flight finish (leases cover anything cut short)."""
        sender = WebhookSender()
        own_waterfall = None
        if self.enrichment is None:
            own_waterfall = build_waterfall(self.database, self.settings, RateLimits(self.settings))
            self.enrichment = (own_waterfall, load_box(self.settings))
        try:
            tasks = [
                asyncio.create_task(self._dispatch(sender)),
                asyncio.create_task(self._loop("batches", self._batches)),
                asyncio.create_task(self._loop("enrichment", self._enrichment_batches)),
                asyncio.create_task(self._loop("sequences", self._sequence_sends)),
                asyncio.create_task(self._loop("mailboxes", self._mailbox_reads)),
                asyncio.create_task(self._loop("visits", self._visit_purge)),
                asyncio.create_task(self._loop("search", self._search_changes)),
                asyncio.create_task(self._loop("search_check", self._search_check)),
                asyncio.create_task(self._loop("sources", self._source_runs)),
                asyncio.create_task(self._loop("email_checks", self.email_checks.run_round)),
                asyncio.create_task(self._loop("refunds", self._bounce_reviews)),
                asyncio.create_task(self._loop("suppressions", self._suppression_sweep)),
                asyncio.create_task(self._loop("compliance", self._compliance)),
                asyncio.create_task(self._heartbeat()),
            ]
            if not self.database.is_sqlite:
                tasks.append(asyncio.create_task(self._listen()))
            log.info("worker started", extra={"worker_id": self.worker_id, "max_in_flight": self.max_in_flight})
            try:
                await self.stopping.wait()
            finally:
                self.stopping.set()
                wakeup.wake()
                await asyncio.gather(*tasks, return_exceptions=True)
                log.info("worker stopped", extra={"worker_id": self.worker_id})
        finally:
            await sender.close()
            if own_waterfall is not None:
                await close_waterfall(own_waterfall)
                await own_waterfall.calls.limits.close()

    async def _dispatch(self, sender: WebhookSender) -> None:
        woken = wakeup.register()
        sending: set[asyncio.Task[None]] = set()
        lease = timedelta(seconds=self.settings.worker_lease_seconds)
        try:
            while not self.stopping.is_set():
                woken.clear()
                room = min(self.settings.worker_batch_size, self.max_in_flight - self.in_flight)
                claimed = []
                if room > 0:
                    try:
                        claimed = await claim_deliveries(
                            self.database,
                            box=self._box(),
                            worker_id=self.worker_id,
                            now=self.clock.now(),
                            limit=room,
                            lease=lease,
                        )
                    except Exception:
                        log.exception("claiming deliveries failed", extra={"worker_id": self.worker_id})
                if claimed:
                    self.in_flight += len(claimed)
                    task = asyncio.create_task(self._send(sender, claimed, woken))
                    sending.add(task)
                    task.add_done_callback(sending.discard)
                    continue  # more may be due: claim again while there is room
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), timeout=self.settings.worker_poll_seconds)
            if sending:
                await asyncio.gather(*sending, return_exceptions=True)
        finally:
            wakeup.unregister(woken)

    async def _send(self, sender: WebhookSender, claimed: list[ClaimedDelivery], woken: asyncio.Event) -> None:
        try:
            await send_claimed(
                self.database,
                claimed,
                sender=sender,
                settings=self.settings,
                clock=self.clock,
                resolver=self.resolver,
                worker_id=self.worker_id,
            )
        except Exception:
            log.exception("recording deliveries failed", extra={"worker_id": self.worker_id})
        finally:
            self.in_flight -= len(claimed)
            woken.set()  # room again: the dispatcher may claim more

    def _box(self) -> SecretBox:
        """The box that opens customer secrets (webhook signing secrets, provider keys, mailbox passwords)."""
        assert self.enrichment is not None
        return self.enrichment[1]

    async def _batches(self) -> int:
        return await batch_service.run_due_batch(
            self.database, settings=self.settings, clock=self.clock, resolver=self.resolver
        )

    async def _enrichment_batches(self) -> int:
        assert self.enrichment is not None
        waterfall, box = self.enrichment
        return await enrichment_batches.run_due_batch(self.database, waterfall=waterfall, box=box, clock=self.clock)

    async def _sequence_sends(self) -> int:
        assert self.enrichment is not None
        return await sequence_sending.run_due_sends(
            self.database, box=self.enrichment[1], settings=self.settings, clock=self.clock, resolver=self.resolver
        )

    async def _mailbox_reads(self) -> int:
        assert self.enrichment is not None
        await sequence_replies.poll_mailboxes(
            self.database, box=self.enrichment[1], settings=self.settings, clock=self.clock
        )
        return 0  # read on the poll interval, never in a tight loop

    async def _visit_purge(self) -> int:
        """Visits past VPX_VISIT_RETENTION_DAYS deleted (D33), looked for every few minutes."""
        now = self.clock.now()
        if self._purged_at is not None and now - self._purged_at < PURGE_EVERY:
            return 0
        before = now - timedelta(days=self.settings.visit_retention_days)
        async with self.database.write_sessions() as session, session.begin():
            deleted = await visitor_service.purge_visits(session, before=before)
        if deleted == 0:
            self._purged_at = now
        return deleted

    async def _search_changes(self) -> int:
        """Changes to contacts folded into the search postings (searches apply pending ones meanwhile).
        A fold rewrites each touched term's bitmaps whatever the number of changes, so under a
        steady trickle the worker folds once a poll interval (a batch that gathered meanwhile) rather
        than at each change; it goes on at once only after a full batch (more may wait)."""
        folded = await search_postings.fold_changes(self.database)
        return folded if folded >= search_postings.MERGE_BATCH else 0

    async def _search_check(self) -> int:
        """A sample of the search index checked against the contacts on its interval, what is wrong
        logged once and repaired (vpx.contacts.search.checks)."""
        every = self.settings.search_check_seconds
        now = self.clock.now()
        if not every or (self._checked_at is not None and (now - self._checked_at).total_seconds() < every):
            return 0
        self._checked_at = now
        report = await search_checks.check_sample(self.database, contacts=self.settings.search_check_sample)
        for mismatch in report.mismatches:
            if (mismatch.term, mismatch.chunk) not in self._told_wrong:
                self._told_wrong.add((mismatch.term, mismatch.chunk))
                log.warning("search index term wrong; repairing it", extra=mismatch.as_dict())
        if report.mismatches:
            report.repaired = await search_checks.repair(self.database, report.mismatches)
        await search_checks.record(self.database, report, now=now)
        return 0  # checked on its interval, never in a tight loop

    async def _source_runs(self) -> int:
        """The publishers' sources that are due (vpx.sources), a few at a time, each under a lease."""
        return await source_runner.worker_round(
            self.database,
            self.settings,
            owner=self.worker_id,
            box=self._box(),
            clock=self.clock,
            stopping=self.stopping,
        )

    async def _bounce_reviews(self) -> int:
        """Hard bounces the sequences saw, under the refund rules (vpx.quality.bounces)."""
        return await quality_bounces.review_pending(self.database, settings=self.settings, clock=self.clock)

    async def _suppression_sweep(self) -> int:
        """Buyers whose reveal raced a new suppression entry, told late (vpx.suppression.sweep), every
        few seconds."""
        now = self.clock.now()
        if self._swept_at is not None and now - self._swept_at < suppression_sweep.EVERY:
            return 0
        self._swept_at = now
        await suppression_sweep.sweep_recent(self.database, now=now)
        return 0  # swept on its interval, never in a tight loop

    async def _compliance(self) -> int:
        """The DROP cycle when due, Do-Not-Call data aging out, privacy requests past their 24 months
        (vpx.compliance.lane), each on its interval."""
        if self._compliance_lane is None:
            self._compliance_lane = ComplianceLane(self.database, self.settings, self._box())
        return await self._compliance_lane.round(self.clock.now())

    async def _loop(self, name: str, one_round: Callable[[], Awaitable[int]]) -> None:
        woken = wakeup.register()
        try:
            while not self.stopping.is_set():
                woken.clear()
                try:
                    done = await one_round()
                except Exception:
                    log.exception("worker round failed", extra={"loop": name, "worker_id": self.worker_id})
                    done = 0
                if done:
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), timeout=self.settings.worker_poll_seconds)
        finally:
            wakeup.unregister(woken)

    async def _heartbeat(self) -> None:
        """Writes this worker's beat every few seconds (/readyz and `vpx status` read them); a clean
        stop removes it."""
        started = self.clock.now()
        try:
            while not self.stopping.is_set():
                try:
                    await worker_status.beat(
                        self.database,
                        worker_id=self.worker_id,
                        in_server=self.in_server,
                        started_at=started,
                        now=self.clock.now(),
                    )
                except Exception:
                    log.exception("writing the worker's heartbeat failed", extra={"worker_id": self.worker_id})
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stopping.wait(), timeout=worker_status.HEARTBEAT.total_seconds())
        finally:
            with contextlib.suppress(Exception):
                await worker_status.forget(self.database, worker_id=self.worker_id)

    async def _listen(self) -> None:
        """Keeps a LISTEN connection open; its notifications wake this process's lanes."""
        await listen_until(self.database.url, NOTIFY_CHANNEL, wakeup.wake, self.stopping, log=log)


class InProcessWorker:
    """The worker inside a server process, started and stopped by the app's lifespan."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        worker.in_server = True
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self.worker.run())

    async def stop(self, grace_seconds: float) -> None:
        if self.task is None:
            return
        self.worker.stop()
        try:
            await asyncio.wait_for(self.task, timeout=grace_seconds)
        except TimeoutError:
            log.warning("worker did not stop in time; its leases will return its claims")
        except Exception:
            log.exception("worker ended with an error")
