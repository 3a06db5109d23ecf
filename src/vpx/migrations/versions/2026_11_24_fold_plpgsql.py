"""fold_plpgsql: PostgreSQL's vpx_fold in PL/pgSQL instead of SQL, the same answer at less cost

The stored search vector calls vpx_fold five times a contact row. A SQL function is inlined only
when its body is no more volatile than its declaration; vpx_fold is IMMUTABLE over the STABLE
unaccent(), so it never was, and each call ran the SQL-function executor: 1.3 µs against 0.75 µs in
PL/pgSQL, whose simple-expression path caches the plan. Inserting 200,000 contacts: 6.6 s -> 5.0 s
(docs/benchmarks.md). The body and its result are unchanged, so stored vectors stay valid.

Revision ID: 20261124_fold_plpgsql
Revises: 20261122_signal_pair_index
Create Date: 2026-11-24 04:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "20261124_fold_plpgsql"
down_revision: str | Sequence[str] | None = "20261122_signal_pair_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FOLD = "lower(public.unaccent('public.unaccent'::regdictionary, $1))"


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "CREATE OR REPLACE FUNCTION vpx_fold(text) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT "
        f"AS $$ BEGIN RETURN {FOLD}; END $$"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "CREATE OR REPLACE FUNCTION vpx_fold(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT "
        f"AS $$ SELECT {FOLD} $$"
    )
