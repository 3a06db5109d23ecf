"""Typed dependencies for what the app holds: settings, the clock, the search backend.

All async: FastAPI runs a plain `def` dependency in a worker thread, a costly hop for a lookup.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends, Request

from vpx.config import Settings
from vpx.contacts.search import SearchBackend


async def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def _now(request: Request) -> datetime:
    now: datetime = request.app.state.clock.now()
    return now


async def _search(request: Request) -> SearchBackend:
    # A test key's request searches the sandbox's catalogue (vpx.sandbox).
    backend: SearchBackend | None = getattr(request.state, "search", None)
    return backend if backend is not None else request.app.state.search


def mode_part(request: Request, name: str) -> Any:
    """What the app holds under ``name`` (its signal broker, enrichment waterfall, visitor resolver…)
    for the request's mode: the sandbox's for a test key (vpx.sandbox), else the app's own."""
    value = getattr(request.state, name, None)
    return value if value is not None else getattr(request.app.state, name)


AppSettings = Annotated[Settings, Depends(_settings)]
Now = Annotated[datetime, Depends(_now)]
Search = Annotated[SearchBackend, Depends(_search)]
