"""The sandbox catalogue and its signals: the demo generator's first contacts with a month of signals,
the same for every account (the same seed), and the demo feed adding a few signals as time passes."""

from __future__ import annotations

from datetime import datetime

from vpx.config import Settings
from vpx.contacts.search import SearchBackend
from vpx.db import Database
from vpx.demo import service as demo_service
from vpx.demo import signals as demo_signals

SEED = 42  # the demo's: the sandbox's first contacts are the demo's first contacts
CONTACTS = 2_000
SIGNALS = 200


async def seed(database: Database, settings: Settings, *, search: SearchBackend, now: datetime) -> int:
    """Loads the sandbox catalogue and its month of signals unless they are there (both are loaded
    once: the demo's loaders skip what exists); returns the contacts added."""
    added = await demo_service.load_demo_catalogue(database, count=CONTACTS, seed=SEED, search=search, now=now)
    if added or await demo_signals.demo_signal_count(database) == 0:
        await demo_signals.load_demo_signals(database, count=SIGNALS, seed=SEED, now=now, settings=settings)
    return added
