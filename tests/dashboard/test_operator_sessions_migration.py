"""Migration 20261202_operator_sessions on both databases: a database at the revision before gets the
operator_sessions table as the model describes it, and the downgrade takes it away again."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.ext.asyncio import create_async_engine

from tests.conftest import test_settings
from vpx.db import Base
from vpx.migrations import alembic_config, upgrade

THIS = "20261202_operator_sessions"
BEFORE = "20261201_suppression_sweep"
TABLE = "operator_sessions"

pytestmark = pytest.mark.asyncio


def _differences(connection: sa.Connection) -> list[Any]:
    """What the database lacks or has beyond the model, for this table only."""

    def only_this_table(name: str | None, type_: str, parent_names: Any) -> bool:
        return type_ != "table" or name == TABLE

    context = MigrationContext.configure(connection, opts={"compare_type": True, "include_name": only_this_table})
    metadata = sa.MetaData()
    Base.metadata.tables[TABLE].to_metadata(metadata)
    return list(compare_metadata(context, metadata))


async def _inspect(url: str) -> tuple[bool, list[Any]]:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            present = await connection.run_sync(lambda sync: sa.inspect(sync).has_table(TABLE))
            differences = await connection.run_sync(_differences) if present else []
    finally:
        await engine.dispose()
    return present, differences


async def test_the_table_comes_as_the_model_says_and_goes_on_downgrade(empty_database: str) -> None:
    settings = test_settings(empty_database)
    await asyncio.to_thread(upgrade, settings, BEFORE)
    assert (await _inspect(empty_database))[0] is False

    await asyncio.to_thread(upgrade, settings)
    present, differences = await _inspect(empty_database)
    assert present and differences == []

    await asyncio.to_thread(command.downgrade, alembic_config(settings), BEFORE)
    assert (await _inspect(empty_database))[0] is False
    await asyncio.to_thread(upgrade, settings)  # and up again
    assert (await _inspect(empty_database))[0] is True
