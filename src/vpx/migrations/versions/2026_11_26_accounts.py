"""accounts: the operator's lifecycle (status, suspended_at, deleted_at) and the audit trail of what
operators did to an account

Revision ID: 20261126_accounts
Revises: 20261126_webhook_secrets
Create Date: 2026-11-26 22:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261126_accounts"
down_revision: str | Sequence[str] | None = "20261126_webhook_secrets"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIGINT_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    # Plain ADD COLUMNs on both databases (SQLite's batch mode would rebuild the table).
    op.add_column("accounts", sa.Column("status", sa.String(length=16), nullable=False, server_default="active"))
    op.add_column("accounts", sa.Column("suspended_at", WHEN, nullable=True))
    op.add_column("accounts", sa.Column("deleted_at", WHEN, nullable=True))
    op.create_index(op.f("ix_accounts_status"), "accounts", ["status"])
    op.create_table(
        "account_audit",
        sa.Column("id", BIGINT_PK, autoincrement=True, nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_account_audit")),
    )
    op.create_index(op.f("ix_account_audit_account_id_id"), "account_audit", ["account_id", "id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_account_audit_account_id_id"), table_name="account_audit")
    op.drop_table("account_audit")
    op.drop_index(op.f("ix_accounts_status"), table_name="accounts")
    with op.batch_alter_table("accounts") as batch:
        batch.drop_column("deleted_at")
        batch.drop_column("suspended_at")
        batch.drop_column("status")
