"""search checks: what the last comparison of the postings with the table found, kept with the
postings' generation (read by /metrics, `vpx status` and the operator)

Revision ID: 20261202_search_checks
Revises: 20261202_suppressed_contacts
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261202_search_checks"
down_revision: str | Sequence[str] | None = "20261202_suppressed_contacts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("search_state", sa.Column("checked_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("search_state", sa.Column("last_check", sa.JSON(), nullable=True))


def downgrade() -> None:
    for column in ("last_check", "checked_at"):
        op.execute(f"ALTER TABLE search_state DROP COLUMN {column}")
