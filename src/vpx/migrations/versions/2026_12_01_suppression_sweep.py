"""suppression sweep: suppressions found by when they were made

The worker re-reads the entries of the last few minutes for buyers whose reveal committed while an
entry was being made (vpx.suppression.sweep); this index keeps that read small when nothing is new.

Revision ID: 20261201_suppression_sweep
Revises: 20261201_suppression_notices
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "20261201_suppression_sweep"
down_revision: str | Sequence[str] | None = "20261201_suppression_notices"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(op.f("ix_suppressions_created_at"), "suppressions", ["created_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_suppressions_created_at"), table_name="suppressions")
