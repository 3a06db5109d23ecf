"""Alembic environment: runs the migrations over the async engine of the configured database."""

from __future__ import annotations

import asyncio
from typing import Any

from alembic import context
from sqlalchemy import pool, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

import vpx.models  # noqa: F401  (registers every table)
from vpx.config import get_settings
from vpx.db import Base

config = context.config
target_metadata = Base.metadata

# Objects that live outside the ORM on purpose: SQLite's trigram index of the vocabulary.
DIALECT_OBJECTS = {"search_terms_trgm"}


def _include_object(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
    return not (name in DIALECT_OBJECTS or (name or "").startswith("search_terms_trgm"))


def _url() -> str:
    url = config.attributes.get("database_url")
    return str(url) if url else get_settings().database_url


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        include_object=_include_object,
        compare_type=True,
    )
    with context.begin_transaction():
        if connection.dialect.name == "postgresql":
            # Servers starting at once on one database: the first migrates, the others wait for its
            # commit and then find nothing left to do.
            connection.execute(text("SELECT pg_advisory_xact_lock(72440411)"))
        context.run_migrations()


async def _run_async() -> None:
    engine = create_async_engine(_url(), poolclass=pool.NullPool)
    async with engine.connect() as connection:
        await connection.run_sync(_run)
    await engine.dispose()


def _run_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    _run_offline()
else:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
    else:
        asyncio.run(_run_async())
