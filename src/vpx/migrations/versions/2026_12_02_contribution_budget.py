"""contribution budget: the rows each account sent to be contributed per UTC day, the count its daily
budget is held to

Revision ID: 20261202_contribution_budget
Revises: 20261129_refusal_addresses
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261202_contribution_budget"
down_revision: str | Sequence[str] | None = "20261129_refusal_addresses"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "contribution_days",
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("rows", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_contribution_days_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("account_id", "day", name=op.f("pk_contribution_days")),
    )


def downgrade() -> None:
    op.drop_table("contribution_days")
