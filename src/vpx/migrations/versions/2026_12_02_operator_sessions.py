"""operator sessions: the operator page's sign-ins, kept on the server

The operator page's cookie held a sealed session that nothing on the server could end; it now holds a
random token whose SHA-256 is a row here, deleted by signing out. Sealed cookies issued before open
nothing: operators signed in sign in again.

Revision ID: 20261202_operator_sessions
Revises: 20261201_suppression_sweep
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261202_operator_sessions"
down_revision: str | Sequence[str] | None = "20261201_suppression_sweep"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "operator_sessions",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("token_name", sa.String(length=200), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("csrf_token", sa.String(length=64), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("expires_at", WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_operator_sessions")),
    )
    op.create_index(op.f("ix_operator_sessions_expires_at"), "operator_sessions", ["expires_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_operator_sessions_expires_at"), table_name="operator_sessions")
    op.drop_table("operator_sessions")
