"""The sandbox: its database and what the app keeps per database (search, signal broker, enrichment,
visitor resolver), made ready on first use, with its own background worker and signal feed."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from vpx.auth.ratelimit import RateLimits
from vpx.clock import Clock
from vpx.config import Settings
from vpx.contacts.search import backend_for
from vpx.contacts.search.folding import FoldAssist
from vpx.db import Database
from vpx.demo.feed import DemoFeed
from vpx.enrichment import build_waterfall, close_waterfall
from vpx.outbound.resolver import Resolver
from vpx.sandbox import accounts, catalogue, location
from vpx.secrets import SecretBox
from vpx.signals.stream import SignalBroker
from vpx.visitors import build_resolver
from vpx.worker.loop import InProcessWorker, Worker

log = logging.getLogger("vpx.sandbox")

# What a test key's request finds in its state instead of the app's own (vpx.db.get_database,
# vpx.deps.mode_part): every part that holds a database.
PARTS = ("database", "search", "fold_assist", "signal_broker", "enrichment", "visitors")


class Sandbox:
    """Test mode's database and parts; ``ready()`` makes the database (migrated, the catalogue loaded)
    the first time it is needed, in any process, and starts its worker and feed in a server."""

    def __init__(self, main: Database, settings: Settings, *, clock: Clock, rate_limits: RateLimits) -> None:
        self.main = main
        self.main_settings = settings
        self.settings = location.sandbox_settings(settings)
        self.clock = clock
        self.database = Database(self.settings, livemode=False)
        self.search = backend_for(self.database.dialect).refresh_from(self.database)
        self.fold_assist = FoldAssist(self.database)
        self.search.on_backlog = self.fold_assist.request
        # Streams' keys and accounts are checked where they are: in the main database.
        self.signal_broker = SignalBroker(self.database, self.settings, access_database=main)
        self.enrichment = build_waterfall(self.database, self.settings, rate_limits)
        self.visitors = build_resolver(self.database, self.settings)
        self.state = {name: getattr(self, name) for name in PARTS} | {"livemode": False}
        self._ready = False
        self._lock = asyncio.Lock()
        self._shadows: set[str] = set()
        # Set by the server's lifespan: what starts the sandbox's worker and feed once it is ready.
        self._on_ready: Callable[[], None] | None = None
        self._worker: InProcessWorker | None = None
        self._feed: DemoFeed | None = None

    async def ready(self) -> None:
        """Makes the sandbox database when this is its first use anywhere (a few seconds, once): made,
        migrated, the catalogue and its signals loaded. Cheap once done in this process."""
        if self._ready:
            return
        async with self._lock:
            if self._ready:
                return
            await location.create_database(self.main_settings, self.settings)
            async with location.made_once(self.settings):  # one process at a time makes it
                await location.migrate(self.main_settings, self.settings)
                added = await catalogue.seed(self.database, self.settings, search=self.search, now=self.clock.now())
            if added:
                log.info("sandbox: catalogue loaded", extra={"contacts": added})
            self._ready = True
        if self._on_ready is not None:
            self._on_ready()

    async def ensure_account(self, account_id: str) -> None:
        """The account's shadow exists (made on its first test-key request, with its test balance)."""
        if account_id in self._shadows:
            return
        await self.ready()
        await accounts.ensure_shadow(
            self.main, self.database, account_id=account_id, now=self.clock.now(), settings=self.settings
        )
        self._shadows.add(account_id)

    async def start(self, *, resolver: Resolver, box: SecretBox) -> None:
        """For the server's lifespan: the sandbox's worker (when the server runs one) and signal feed,
        now if the sandbox exists, else once a first test key has made it."""

        def start_services() -> None:
            if self._worker is None and self.main_settings.runs_worker_in_process:
                worker = Worker(
                    self.database,
                    self.settings,
                    clock=self.clock,
                    resolver=resolver,
                    enrichment=(self.enrichment, box),
                )
                self._worker = InProcessWorker(worker)
                self._worker.start()
            if self._feed is None and self.settings.sandbox_feed_seconds > 0:
                self._feed = DemoFeed(
                    self.database, self.settings, clock=self.clock, interval_seconds=self.settings.sandbox_feed_seconds
                )
                self._feed.start()

        self._on_ready = start_services
        if await location.exists(self.settings):
            await self.ready()

    async def stop(self) -> None:
        if self._feed is not None:
            await self._feed.stop()
        await self.signal_broker.stop()
        await self.fold_assist.stop()
        if self._worker is not None:
            await self._worker.stop(grace_seconds=self.settings.webhook_timeout_seconds + 2)
        await close_waterfall(self.enrichment)
        await self.database.dispose()


def build_sandbox(main: Database, settings: Settings, *, clock: Clock, rate_limits: RateLimits) -> Sandbox | None:
    """The sandbox of this server, or None when test mode is off (VPX_TEST_MODE=false)."""
    if not settings.test_mode:
        return None
    return Sandbox(main, settings, clock=clock, rate_limits=rate_limits)
