"""Fixtures for registry imports: run an import against the test app's database, and the shared
real samples (tests using them skip, saying why, when the files are absent)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.conftest import SHARED_DATA
from vpx.clock import FixedClock
from vpx.models import Contact, ContactSource, DecisionMaker, PossibleDuplicate, RegistryRecord
from vpx.registries import importer
from vpx.registries.records import ImportSummary
from vpx.registries.sources import all_sources

Importer = Callable[..., Awaitable[ImportSummary]]


def shared(*parts: str) -> Path:
    """A file of the shared real samples; skips the test when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"shared sample {'/'.join(parts)} not found under {SHARED_DATA}")
    return path


@pytest.fixture
def run_import(app: FastAPI, clock: FixedClock) -> Importer:
    async def run(source: str, path: Path, **options: Any) -> ImportSummary:
        options.setdefault("file_date", date(2026, 11, 1))
        return await importer.run_import(app.state.database, all_sources()[source](), path, now=clock.now(), **options)

    return run


async def catalogue_counts(app: FastAPI) -> dict[str, int]:
    """Row counts that must agree in a consistent catalogue."""
    async with app.state.database.read_sessions() as session:
        counts = {}
        for name, model in (
            ("contacts", Contact),
            ("sources", ContactSource),
            ("records", RegistryRecord),
            ("people", DecisionMaker),
        ):
            counts[name] = int(await session.scalar(select(func.count()).select_from(model)) or 0)
        orphans = await session.scalar(
            select(func.count())
            .select_from(Contact)
            .where(~select(ContactSource.id).where(ContactSource.contact_id == Contact.id).exists())
        )
        counts["contacts_without_source"] = int(orphans or 0)
        return counts


async def possible_duplicates(app: FastAPI) -> list[tuple[str, str, str]]:
    """The recorded possible duplicates as (first contact's name, second's name, reason), in order."""
    async with app.state.database.read_sessions() as session:
        rows = await session.execute(select(PossibleDuplicate).order_by(PossibleDuplicate.id))
        pairs = list(rows.scalars())
        names = {c.id: c.business_name for c in await session.scalars(select(Contact))}
    return [(names[p.contact_id], names[p.other_contact_id], p.reason) for p in pairs]
