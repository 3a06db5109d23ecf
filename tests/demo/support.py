"""Loading the demo into a test's database the way `vpx demo` does."""

from __future__ import annotations

from fastapi import FastAPI
from sqlalchemy import select

from vpx.demo import service as demo_service
from vpx.demo import signals as demo_signals
from vpx.models import Signal
from vpx.signals.pipeline import IngestReport


async def load_demo(app: FastAPI, *, contacts: int = 1000, signals: int = 200) -> tuple[int, IngestReport]:
    """The demo catalogue and its month of signals, at the app clock's time; what each added."""
    database, now = app.state.database, app.state.clock.now()
    added = await demo_service.load_demo_catalogue(database, count=contacts, seed=42, search=app.state.search, now=now)
    report = await demo_signals.load_demo_signals(
        database, count=signals, seed=42, now=now, settings=app.state.settings
    )
    return added, report


async def all_signals(app: FastAPI) -> list[Signal]:
    async with app.state.database.read_sessions() as session:
        return list(await session.scalars(select(Signal).order_by(Signal.sequence)))
