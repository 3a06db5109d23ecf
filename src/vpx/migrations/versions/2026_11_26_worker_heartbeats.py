"""worker heartbeats: which background workers are alive (/readyz, vpx status)

Revision ID: 20261126_worker_heartbeats
Revises: 20261126_accounts
Create Date: 2026-11-26 23:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261126_worker_heartbeats"
down_revision: str | Sequence[str] | None = "20261126_accounts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "worker_heartbeats",
        sa.Column("worker_id", sa.String(length=200), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("in_server", sa.Boolean(), nullable=False),
        sa.Column("started_at", WHEN, nullable=False),
        sa.Column("beat_at", WHEN, nullable=False),
        sa.PrimaryKeyConstraint("worker_id", name=op.f("pk_worker_heartbeats")),
    )


def downgrade() -> None:
    op.drop_table("worker_heartbeats")
