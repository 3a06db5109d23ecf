"""Fixtures for sources: a fake publisher on loopback, settings with a data directory of the test's
own, short retry budgets (the rules are the same, the waits shorter), and helpers to add and run a
source as the CLI and the worker do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from tests.conftest import test_settings
from tests.sources.publisher import Publisher
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.models import DataSource
from vpx.secrets import load_box
from vpx.sources import fetch, runner
from vpx.sources import service as source_service
from vpx.sources.job import RunReport

ADMIN = "sources-admin-token-0123456789"
QUICK = fetch.RetryPolicy(
    retry_after_cap=3.0, server_error_budget=1.0, backoff=(0.05, 0.1, 0.2), connect_timeout=5, read_timeout=10
)


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return test_settings(database_url, data_dir=tmp_path / "data", admin_token=ADMIN)


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fetch, "DEFAULT_POLICY", QUICK)


@pytest.fixture
def publisher() -> Iterator[Publisher]:
    served = Publisher()
    yield served
    served.close()


async def add_source(app: FastAPI, name: str, kind: str, url: str, **more: Any) -> DataSource:
    new = source_service.check_new(
        name=name,
        kind=kind,
        url=url,
        every=more.pop("every", None),
        mapping=more.pop("mapping", None),
        mapping_name=more.pop("mapping_name", None),
        options=more.pop("options", {}),
    )
    settings: Settings = app.state.settings
    async with app.state.database.write_sessions() as session, session.begin():
        return await source_service.add_source(session, new, box=load_box(settings), now=app.state.clock.now())


async def run_source(app: FastAPI, settings: Settings, name: str, *, owner: str = "test") -> RunReport:
    return await runner.run_source(
        app.state.database, settings, name=name, owner=owner, box=load_box(settings), clock=app.state.clock
    )


async def source_row(app: FastAPI, name: str) -> DataSource:
    async with app.state.database.read_sessions() as session:
        return await source_service.get_source(session, name)


def later(clock: FixedClock, **delta: float) -> None:
    from datetime import timedelta

    clock.set(clock.now() + timedelta(**delta))
