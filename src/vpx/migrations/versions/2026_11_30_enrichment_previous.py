"""enrichment previous: the value a refresh replaced is kept beside the new one, with its provenance

Revision ID: 20261130_enrichment_previous
Revises: 20261129_enrichment_messages
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261130_enrichment_previous"
down_revision: str | Sequence[str] | None = "20261129_enrichment_messages"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("enrichment_values") as table:
        table.add_column(sa.Column("previous", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("enrichment_values") as table:
        table.drop_column("previous")
