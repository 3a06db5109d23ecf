"""The demo's live feed: a few evidence events (D36) a minute through the one ingestion pipeline while
the server runs, so that a newcomer's signal stream, webhooks and auto-buy rules do something in the
first minute.

The server runs it when ``VPX_DEMO_FEED=1`` (``make serve`` sets it); ``vpx demo --live`` runs it in the
foreground next to any running server. It is a demonstration, not work of the product, so it is a plain
loop rather than a job of the background worker.

Each round is one time slot of ``interval_seconds``: its events are drawn from a generator seeded by the
slot and carry the slot in their record ids, so several server processes feeding at once, or a feed
restarted within a slot, add each event once. One event of a round is about a home-services business in
one of the README tour's states (its auto-buy rule's), warm or hot; the other about any demo business.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from vpx.clock import Clock
from vpx.config import Settings
from vpx.db import Database
from vpx.demo.evidence import DECK, FCRA_EVIDENCE, DemoBusiness, evidence_event
from vpx.demo.signals import pick_business
from vpx.signals.evidence import event_from
from vpx.signals.pipeline import IngestReport, ingest_events

log = logging.getLogger(__name__)

FEED_ENV = "VPX_DEMO_FEED"
INTERVAL_SECONDS = 20.0
RECORD_PREFIX = "demo-live:"
# The README tour's running example: home-services businesses in its auto-buy rule's states.
SPOTLIGHT_INDUSTRY = "home-services"
SPOTLIGHT_STATES = ("CA", "CO", "TX")
SPOTLIGHT_CARDS = (
    ("switching_intent", "hot"), ("switching_intent", "warm"), ("bant_qualified", "hot"),
    ("bant_qualified", "warm"), ("permit_filed", "warm"), ("tech_install", "warm"),
)  # fmt: skip
# One round in this many adds evidence that makes its second event fcra_blocked (D21).
FCRA_EVERY = 10


def feed_requested(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether ``VPX_DEMO_FEED`` asks for the live demo feed."""
    return environ.get(FEED_ENV, "").strip().lower() in {"1", "true", "yes", "on"}


class DemoFeed:
    """Feeds a few demo evidence events per round; ``feed_once`` is one round, ``start`` runs rounds
    in the background until ``stop``."""

    def __init__(
        self,
        database: Database,
        settings: Settings,
        *,
        clock: Clock,
        seed: int = 42,
        interval_seconds: float = INTERVAL_SECONDS,
    ) -> None:
        self.database = database
        self.settings = settings
        self.clock = clock
        self.seed = seed
        self.interval = interval_seconds
        self.rounds = 0
        self.fed = asyncio.Event()  # set once a round has run (tests wait on it, never on the time)
        self._task: asyncio.Task[None] | None = None

    def _slot(self) -> int:
        return int(self.clock.now().timestamp() // self.interval)

    async def feed_once(self) -> IngestReport:
        """One round: its slot's events, ingested; an event of a slot already fed is a duplicate."""
        now = self.clock.now()
        slot = self._slot()
        rng = random.Random(f"demo-feed:{self.seed}:{slot}")
        async with self.database.read_sessions() as session:
            spotlight = await pick_business(
                session, rng, industry=SPOTLIGHT_INDUSTRY, states=SPOTLIGHT_STATES
            ) or await pick_business(session, rng, industry=SPOTLIGHT_INDUSTRY)
            other = await pick_business(session, rng)
        raws: list[dict[str, Any]] = []
        for number, business in enumerate((spotlight, other)):
            if business is None:
                continue
            category, level = _card(rng, business, spotlight=number == 0)
            fcra = FCRA_EVIDENCE[slot % len(FCRA_EVIDENCE)] if number == 1 and slot % FCRA_EVERY == 0 else None
            observed_at = now - timedelta(minutes=rng.randrange(1, 90))
            record_id = f"{RECORD_PREFIX}{slot}:{number}"
            raws.append(
                evidence_event(rng, business, category, level, observed_at=observed_at, record_id=record_id, fcra=fcra)
            )
        return await ingest_events(self.database, map(event_from, raws), settings=self.settings, clock=self.clock)

    async def run(self, on_round: Callable[[IngestReport], None] | None = None) -> None:
        """Rounds until cancelled, one at the start of each slot. A failed round is logged and the
        next one tried: a demo feed never stops the server."""
        while True:
            try:
                report = await self.feed_once()
            except Exception:
                log.exception("demo feed: a round failed; trying again next round")
            else:
                log.info("demo feed: %d new signals %s", report.ingested, report.signal_ids)
                if on_round is not None:
                    on_round(report)
            self.rounds += 1
            self.fed.set()
            # To just past the next slot's start (a timer may fire a hair early by the wall clock).
            elapsed = self.clock.now().timestamp() % self.interval
            await asyncio.sleep(max(1.0, self.interval - elapsed) + 0.1)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self.run(), name="vpx demo feed")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def _card(rng: random.Random, business: DemoBusiness, *, spotlight: bool) -> tuple[str, str]:
    """A category and level for an event about ``business``: a permit only from a trade that files them."""
    if spotlight:
        return rng.choice([c for c in SPOTLIGHT_CARDS if c[0] != "permit_filed" or business.files_permits])
    cards = [card for card in DECK if card[0] != "permit_filed" or business.files_permits]
    category, level, _ = rng.choices(cards, weights=[weight for *_, weight in cards])[0]
    return category, level


def start_demo_feed(database: Database, settings: Settings, *, clock: Clock) -> DemoFeed | None:
    """For the server's start-up: the live demo feed, started, when ``VPX_DEMO_FEED=1``; else None."""
    if not feed_requested():
        return None
    feed = DemoFeed(database, settings, clock=clock)
    feed.start()
    log.info("demo feed: a few demo signals every %d seconds (%s=1)", int(feed.interval), FEED_ENV)
    return feed
