"""search indexes retired: the full-text indexes the postings replaced

Search answers from the postings (migration 20261128_search_postings) on both databases, so the
indexes it used before go, with what kept them: on SQLite the FTS5 table ``contacts_fts``, its
triggers and the generated ``search_facets`` column; on PostgreSQL the ``search_vector`` column, its
GIN index, its trigger and functions. Every contact write no longer keeps them up to date (a quarter
to a half of a registry import's time), and the database loses their size. The vocabulary of typo
corrections (``search_terms`` and its trigram index) stays.

A downgrade puts them back as migrations 20261122_core and 20261124_search_vector_input made them,
filled from the contacts.

Revision ID: 20261128_search_indexes_retired
Revises: 20261128_search_postings
Create Date: 2026-11-28
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from alembic import op

revision: str = "20261128_search_indexes_retired"
down_revision: str | Sequence[str] | None = "20261128_search_postings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SEARCHED = ("business_name", "specialty", "license_type", "industry", "city", "state", "city_key")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in ("contacts_fts_ai", "contacts_fts_ad", "contacts_fts_au"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS contacts_fts")
        op.execute("ALTER TABLE contacts DROP COLUMN search_facets")
        return
    op.execute("DROP TRIGGER IF EXISTS contacts_search_vector ON contacts")
    op.execute("DROP FUNCTION IF EXISTS vpx_contacts_search_vector()")
    op.execute(f"DROP FUNCTION IF EXISTS vpx_contact_vector({', '.join('text' for _ in SEARCHED)})")
    op.execute("ALTER TABLE contacts DROP COLUMN IF EXISTS search_vector")  # and its GIN index


def downgrade() -> None:
    core = importlib.import_module("vpx.migrations.versions.2026_11_22_core")
    if op.get_bind().dialect.name == "sqlite":
        for statement in core.SQLITE_SEARCH:
            if "search_terms" not in statement:
                op.execute(statement)
        columns = core._FTS_COLUMNS
        op.execute(
            f"INSERT INTO contacts_fts(rowid, {columns}) SELECT id, {columns} FROM contacts WHERE status = 'active'"
        )
        return
    for statement in core.POSTGRES_SEARCH:
        if "search_vector" in statement:
            op.execute(statement)
    importlib.import_module("vpx.migrations.versions.2026_11_24_search_vector_input").upgrade()
