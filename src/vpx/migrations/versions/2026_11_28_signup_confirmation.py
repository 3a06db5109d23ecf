"""sign-up confirmation: a dashboard account's email is confirmed by an emailed link before it can sign
in and before its free credits start

Revision ID: 20261128_signup_confirmation
Revises: 20261127_password_resets
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261128_signup_confirmation"
down_revision: str | Sequence[str] | None = "20261127_password_resets"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("account_logins", schema=None) as batch_op:
        batch_op.add_column(sa.Column("email_confirmed_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("confirmation_hash", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("confirmation_expires_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index(batch_op.f("ix_account_logins_confirmation_hash"), ["confirmation_hash"], unique=True)
    # Accounts that signed up before confirmation existed received their free credits then: they stay
    # as they are, counted as confirmed when they signed up.
    op.execute("UPDATE account_logins SET email_confirmed_at = created_at WHERE email_confirmed_at IS NULL")


def downgrade() -> None:
    with op.batch_alter_table("account_logins", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_account_logins_confirmation_hash"))
        batch_op.drop_column("confirmation_expires_at")
        batch_op.drop_column("confirmation_hash")
        batch_op.drop_column("email_confirmed_at")
