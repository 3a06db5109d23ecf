"""Batch reveals that leave out phones on the Do-Not-Call registry: batch_reveals.exclude_dnc.

Revision ID: 20261203_compliance_batches
Revises: 20261203_compliance
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261203_compliance_batches"
down_revision: str | Sequence[str] | None = "20261203_compliance"
branch_labels: str | Sequence[str] | None = None
# batch_reveals is the webhooks branch's table.
depends_on: str | Sequence[str] | None = ("20261122_webhooks",)


def upgrade() -> None:
    false = "0" if op.get_bind().dialect.name == "sqlite" else "false"
    op.add_column(
        "batch_reveals", sa.Column("exclude_dnc", sa.Boolean(), server_default=sa.text(false), nullable=False)
    )


def downgrade() -> None:
    op.execute("ALTER TABLE batch_reveals DROP COLUMN exclude_dnc")
