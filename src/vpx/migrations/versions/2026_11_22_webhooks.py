"""webhooks: subscriptions, the delivery outbox and attempts; batch reveals

Revision ID: 20261122_webhooks
Revises: 20261122_core
Create Date: 2026-11-22 01:48:45.052709
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261122_webhooks"
down_revision: str | Sequence[str] | None = "20261122_core"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "batch_reveals",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("webhook_url", sa.String(length=2048), nullable=True),
        sa.Column("webhook_secret", sa.String(length=100), nullable=True),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("leased_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_batch_reveals_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_batch_reveals")),
    )
    with op.batch_alter_table("batch_reveals", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_batch_reveals_account_id"), ["account_id"], unique=False)

    op.create_table(
        "webhook_endpoints",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("description", sa.String(length=200), nullable=False),
        sa.Column("events", sa.JSON(), nullable=False),
        sa.Column("signal_filter", sa.JSON(), nullable=False),
        sa.Column("secret", sa.String(length=100), nullable=False),
        sa.Column("previous_secret", sa.String(length=100), nullable=True),
        sa.Column("previous_secret_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("disabled_reason", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_webhook_endpoints_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_endpoints")),
    )
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_webhook_endpoints_account_id"), ["account_id"], unique=False)

    op.create_table(
        "batch_reveal_items",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("batch_id", sa.String(length=32), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("contact_id", sa.String(length=40), nullable=False),
        sa.Column("status", sa.String(length=24), nullable=False),
        sa.Column("credits_charged", sa.BigInteger(), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["batch_id"],
            ["batch_reveals.id"],
            name=op.f("fk_batch_reveal_items_batch_id_batch_reveals"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_batch_reveal_items")),
    )
    with op.batch_alter_table("batch_reveal_items", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_batch_reveal_items_batch_id"), ["batch_id"], unique=False)

    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("event_id", sa.String(length=40), nullable=False),
        sa.Column("event_type", sa.String(length=40), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("endpoint_id", sa.String(length=32), nullable=True),
        sa.Column("url", sa.String(length=2048), nullable=True),
        sa.Column("secret", sa.String(length=100), nullable=True),
        sa.Column("batch_id", sa.String(length=32), nullable=True),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempt_count", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("leased_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("leased_by", sa.String(length=64), nullable=True),
        sa.Column("redelivery_of", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_webhook_deliveries_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["endpoint_id"],
            ["webhook_endpoints.id"],
            name=op.f("fk_webhook_deliveries_endpoint_id_webhook_endpoints"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
    )
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_webhook_deliveries_account_id"), ["account_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_webhook_deliveries_batch_id"), ["batch_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_webhook_deliveries_endpoint_id_id"), ["endpoint_id", "id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_webhook_deliveries_status_next_attempt_at"), ["status", "next_attempt_at"], unique=False
        )

    op.create_table(
        "webhook_attempts",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("delivery_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("attempted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.String(length=500), nullable=True),
        sa.Column("response_excerpt", sa.String(length=1000), nullable=True),
        sa.ForeignKeyConstraint(
            ["delivery_id"],
            ["webhook_deliveries.id"],
            name=op.f("fk_webhook_attempts_delivery_id_webhook_deliveries"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_attempts")),
    )
    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_webhook_attempts_delivery_id"), ["delivery_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_attempts_delivery_id"))

    op.drop_table("webhook_attempts")
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_deliveries_status_next_attempt_at"))
        batch_op.drop_index(batch_op.f("ix_webhook_deliveries_endpoint_id_id"))
        batch_op.drop_index(batch_op.f("ix_webhook_deliveries_batch_id"))
        batch_op.drop_index(batch_op.f("ix_webhook_deliveries_account_id"))

    op.drop_table("webhook_deliveries")
    with op.batch_alter_table("batch_reveal_items", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_batch_reveal_items_batch_id"))

    op.drop_table("batch_reveal_items")
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_endpoints_account_id"))

    op.drop_table("webhook_endpoints")
    with op.batch_alter_table("batch_reveals", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_batch_reveals_account_id"))

    op.drop_table("batch_reveals")
