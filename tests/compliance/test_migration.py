"""Migration 20261203_compliance on both databases: a database at the revision before, holding a
contact, gets the compliance tables and columns as the models describe them, the contact its DROP
hashes (computed by the database as Python computes them), and the downgrade takes it all away again."""

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
from vpx.compliance.hashing import email_hash, phone_hash
from vpx.db import Base
from vpx.migrations import alembic_config, current_heads, upgrade

THIS = "20261203_compliance"
# batch_reveals.exclude_dnc, on top of it (it depends on the webhooks branch as well).
TOP = "20261203_compliance_batches"
# Later revisions of the same line (they need this one first).
LATER = ("20261204_search_other_kinds",)
BEFORE = "20261202_search_checks"
TABLES = (
    "drop_state",
    "drop_batches",
    "drop_items",
    "dnc_area_codes",
    "dnc_numbers",
    "privacy_requests",
    "compliance_events",
    "unsubscribe_links",
)
COLUMNS = {
    "contacts": ("email_hash", "phone_hash", "phone_dnc"),
    "auto_buy_rules": ("exclude_dnc",),
    "batch_reveals": ("exclude_dnc",),
}
EMAIL, PHONE = "Owner@Shop.example", "+12025550143"

pytestmark = pytest.mark.asyncio


def _differences(connection: sa.Connection) -> list[Any]:
    def only_these(name: str | None, type_: str, parent_names: Any) -> bool:
        return type_ != "table" or name in TABLES

    def not_accounts(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
        return not (type_ == "table" and name == "accounts")

    options = {"compare_type": True, "include_name": only_these, "include_object": not_accounts}
    context = MigrationContext.configure(connection, opts=options)
    metadata = sa.MetaData()
    for table in (*TABLES, "accounts"):  # accounts: what unsubscribe_links refers to (not compared)
        Base.metadata.tables[table].to_metadata(metadata)
    return list(compare_metadata(context, metadata))


def _state(connection: sa.Connection) -> dict[str, Any]:
    inspector = sa.inspect(connection)
    columns = {t: {c["name"] for c in inspector.get_columns(t)} for t in COLUMNS}
    found: dict[str, Any] = {
        "tables": [t for t in TABLES if inspector.has_table(t)],
        "columns": sorted(c for t, names in COLUMNS.items() for c in names if c in columns[t]),
    }
    if "email_hash" in columns["contacts"]:
        found["hashes"] = connection.execute(sa.text("SELECT email_hash, phone_hash FROM contacts")).one()
    return found


async def _inspect(url: str, *, compare: bool = False) -> tuple[dict[str, Any], list[Any]]:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            state = await connection.run_sync(_state)
            differences = await connection.run_sync(_differences) if compare else []
    finally:
        await engine.dispose()
    return state, differences


async def _add_contact(url: str) -> None:
    engine = create_async_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.execute(
                sa.text(
                    "INSERT INTO contacts (business_name, name_key, industry, city, city_key, state, country, phone, "
                    "email, status, origin, created_at, updated_at) VALUES ('Shop', 'shop', 'retail', 'Washington', "
                    "'washington', 'DC', 'US', :phone, :email, 'active', 'registry', CURRENT_TIMESTAMP, "
                    "CURRENT_TIMESTAMP)"
                ),
                {"phone": PHONE, "email": EMAIL},
            )
    finally:
        await engine.dispose()


async def test_the_tables_and_hashes_come_and_go(empty_database: str) -> None:
    settings = test_settings(empty_database)
    for head in current_heads(settings):  # every other branch first: the migration alters their tables
        if head not in (THIS, TOP, *LATER):
            await asyncio.to_thread(upgrade, settings, head)
    await asyncio.to_thread(upgrade, settings, BEFORE)
    await _add_contact(empty_database)
    before, _ = await _inspect(empty_database)
    assert before["tables"] == [] and before["columns"] == []

    await asyncio.to_thread(upgrade, settings)
    after, differences = await _inspect(empty_database, compare=True)
    assert after["tables"] == list(TABLES) and differences == []
    assert after["columns"] == ["email_hash", "exclude_dnc", "exclude_dnc", "phone_dnc", "phone_hash"]
    assert tuple(after["hashes"]) == (email_hash(EMAIL), phone_hash(PHONE))

    await asyncio.to_thread(command.downgrade, alembic_config(settings), f"{THIS}-1")
    down, _ = await _inspect(empty_database)
    assert down["tables"] == [] and down["columns"] == []
    await asyncio.to_thread(upgrade, settings)  # and up again
    assert (await _inspect(empty_database))[0]["tables"] == list(TABLES)
