"""Typed dependencies for what the app holds: settings, the clock, the search backend.

All async: FastAPI runs a plain `def` dependency in a worker thread, a costly hop for a lookup.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

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
    backend: SearchBackend = request.app.state.search
    return backend


AppSettings = Annotated[Settings, Depends(_settings)]
Now = Annotated[datetime, Depends(_now)]
Search = Annotated[SearchBackend, Depends(_search)]
