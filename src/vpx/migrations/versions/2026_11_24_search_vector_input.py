"""search_vector_input: PostgreSQL's contacts.search_vector an ordinary column that a trigger keeps,
so that a bulk import can send the vectors it made itself

The column was GENERATED: the server computed it for every row written, ~25 µs a contact (five
folds, five regular-expression replacements, four to_tsvector calls), the largest part of the
server's work in a registry import. It now keeps its values (DROP EXPRESSION rewrites nothing) and a
BEFORE trigger computes the same definition, ``vpx_contact_vector``, whenever a contact is inserted
without one or its searched fields change. Registry imports send vectors made on the reader's core
(``vpx.contacts.search.vector``, held to this definition by a test) for contacts in plain ASCII;
every other writer leaves the column out, as before.

Revision ID: 20261124_search_vector_input
Revises: 20261124_fold_plpgsql
Create Date: 2026-11-24 05:00:00
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from alembic import op

revision: str = "20261124_search_vector_input"
down_revision: str | Sequence[str] | None = "20261124_fold_plpgsql"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SEARCHED = ("business_name", "specialty", "license_type", "industry", "city", "state", "city_key")


def _words(name: str) -> str:
    return f"regexp_replace(vpx_fold(coalesce({name}, '')), '[^[:alnum:]]+', ' ', 'g')"


# The generated column's definition (migration 20261122_core), over the function's parameters.
VECTOR = f"""setweight(to_tsvector('simple', {_words("p_business_name")}), 'A') ||
    setweight(to_tsvector('simple', {_words("p_specialty")}), 'B') ||
    setweight(to_tsvector('simple', {_words("p_license_type")}), 'C') ||
    setweight(to_tsvector('simple', {_words("p_industry")} || ' ' || {_words("p_city")}), 'D') ||
    array_to_tsvector(ARRAY['§st' || lower(p_state), '§in' || replace(p_industry, '-', ''),
                            '§ct' || replace(p_city_key, ' ', '')])"""
UNCHANGED = " AND ".join(f"NEW.{name} IS NOT DISTINCT FROM OLD.{name}" for name in SEARCHED)
ARGUMENTS = ", ".join(f"NEW.{name}" for name in SEARCHED)


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    parameters = ", ".join(f"p_{name} text" for name in SEARCHED)
    op.execute(
        f"CREATE OR REPLACE FUNCTION vpx_contact_vector({parameters}) RETURNS tsvector "
        f"LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$ BEGIN RETURN {VECTOR}; END $$"
    )
    op.execute(
        "CREATE OR REPLACE FUNCTION vpx_contacts_search_vector() RETURNS trigger LANGUAGE plpgsql AS $$\n"
        "BEGIN\n"
        "  IF TG_OP = 'INSERT' AND NEW.search_vector IS NOT NULL THEN RETURN NEW; END IF;\n"
        f"  IF TG_OP = 'UPDATE' AND NEW.search_vector IS NOT NULL AND {UNCHANGED} THEN RETURN NEW; END IF;\n"
        f"  NEW.search_vector := vpx_contact_vector({ARGUMENTS});\n"
        "  RETURN NEW;\n"
        "END $$"
    )
    op.execute("ALTER TABLE contacts ALTER COLUMN search_vector DROP EXPRESSION")
    op.execute(
        "CREATE TRIGGER contacts_search_vector BEFORE INSERT OR UPDATE ON contacts "
        "FOR EACH ROW EXECUTE FUNCTION vpx_contacts_search_vector()"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    core = importlib.import_module("vpx.migrations.versions.2026_11_22_core")
    op.execute("DROP TRIGGER IF EXISTS contacts_search_vector ON contacts")
    op.execute("DROP FUNCTION IF EXISTS vpx_contacts_search_vector()")
    op.execute(f"DROP FUNCTION IF EXISTS vpx_contact_vector({', '.join('text' for _ in SEARCHED)})")
    op.execute("ALTER TABLE contacts DROP COLUMN search_vector")  # and its index
    for statement in core.POSTGRES_SEARCH:
        if "search_vector" in statement:
            op.execute(statement)
