"""signal_pair_index: an index on (industry, state, sequence) for D22 queries that filter both

Revision ID: 20261122_signal_pair_index
Revises: 20261122_topic_activity
Create Date: 2026-11-22 10:50:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "20261122_signal_pair_index"
down_revision: str | Sequence[str] | None = "20261122_topic_activity"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(op.f("ix_signals_industry_state_sequence"), "signals", ["industry", "state", "sequence"])


def downgrade() -> None:
    op.drop_index(op.f("ix_signals_industry_state_sequence"), table_name="signals")
