"""password resets: the hashed tokens of the dashboard's reset links

Revision ID: 20261127_password_resets
Revises: 20261122_dashboard
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261127_password_resets"
down_revision: str | Sequence[str] | None = "20261122_dashboard"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "password_resets",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_password_resets_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_password_resets")),
    )
    with op.batch_alter_table("password_resets", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_password_resets_account_id"), ["account_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_password_resets_expires_at"), ["expires_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("password_resets", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_password_resets_expires_at"))
        batch_op.drop_index(batch_op.f("ix_password_resets_account_id"))
    op.drop_table("password_resets")
