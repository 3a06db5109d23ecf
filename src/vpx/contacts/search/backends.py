"""The search backend of a database: the engine's dialect parts (vpx.contacts.search.sqlite and
vpx.contacts.search.postgres) fill in what vpx.contacts.search.engine leaves to them."""

from __future__ import annotations

from vpx.contacts.search.engine import BaseBackend
from vpx.contacts.search.postgres import PostgresSearch
from vpx.contacts.search.sqlite import SqliteSearch


def backend_for(dialect: str) -> BaseBackend:
    return SqliteSearch() if dialect == "sqlite" else PostgresSearch()
