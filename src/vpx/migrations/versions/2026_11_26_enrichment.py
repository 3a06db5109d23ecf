"""enrichment: customers' provider keys (sealed), enriched values with provenance, the providers'
answers cached, requests per month, batch jobs (D32)

Revision ID: 20261126_enrichment
Revises: 20261126_possible_duplicates
Create Date: 2026-11-26 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261126_enrichment"
down_revision: str | Sequence[str] | None = "20261126_possible_duplicates"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIGINT_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)


def _account(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["account_id"], ["accounts.id"], name=op.f(f"fk_{table}_account_id_accounts"), ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "enrichment_keys",
        sa.Column("id", BIGINT_PK, autoincrement=True, nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("key_sealed", sa.Text(), nullable=False),
        sa.Column("last4", sa.String(length=4), nullable=False),
        sa.Column("monthly_limit", sa.Integer(), nullable=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
        _account("enrichment_keys"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_enrichment_keys")),
        sa.UniqueConstraint("account_id", "provider", name=op.f("uq_enrichment_keys_account_id_provider")),
    )
    op.create_table(
        "enrichment_usage",
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("month", sa.String(length=7), nullable=False),
        sa.Column("requests", sa.Integer(), nullable=False),
        _account("enrichment_usage"),
        sa.PrimaryKeyConstraint("account_id", "provider", "month", name=op.f("pk_enrichment_usage")),
    )
    op.create_table(
        "enrichment_cache",
        sa.Column("id", BIGINT_PK, autoincrement=True, nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("request_key", sa.String(length=64), nullable=False),
        sa.Column("found", sa.Boolean(), nullable=False),
        sa.Column("answer", sa.JSON(), nullable=False),
        sa.Column("fetched_at", WHEN, nullable=False),
        sa.Column("expires_at", WHEN, nullable=False),
        _account("enrichment_cache"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_enrichment_cache")),
        sa.UniqueConstraint(
            "account_id", "provider", "request_key", name=op.f("uq_enrichment_cache_account_id_provider_request_key")
        ),
    )
    op.create_table(
        "enrichment_values",
        sa.Column("id", BIGINT_PK, autoincrement=True, nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("contact_id", BIGINT_PK, nullable=False),
        sa.Column("person_key", sa.String(length=200), nullable=False),
        sa.Column("person_name", sa.String(length=200), nullable=True),
        sa.Column("field", sa.String(length=32), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("provider", sa.String(length=32), nullable=False),
        sa.Column("provider_record_id", sa.String(length=200), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("fetched_at", WHEN, nullable=False),
        _account("enrichment_values"),
        sa.ForeignKeyConstraint(
            ["contact_id"], ["contacts.id"], name=op.f("fk_enrichment_values_contact_id_contacts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_enrichment_values")),
        sa.UniqueConstraint(
            "account_id",
            "contact_id",
            "person_key",
            "field",
            name=op.f("uq_enrichment_values_account_id_contact_id_person_key_field"),
        ),
    )
    op.create_index(op.f("ix_enrichment_values_contact_id"), "enrichment_values", ["contact_id"])
    op.create_table(
        "enrichment_batches",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("providers", sa.JSON(), nullable=True),
        sa.Column("fields", sa.JSON(), nullable=True),
        sa.Column("webhook_url", sa.String(length=2048), nullable=True),
        sa.Column("webhook_secret_sealed", sa.Text(), nullable=True),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("leased_until", WHEN, nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("completed_at", WHEN, nullable=True),
        _account("enrichment_batches"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_enrichment_batches")),
    )
    op.create_index(op.f("ix_enrichment_batches_account_id"), "enrichment_batches", ["account_id"])
    op.create_table(
        "enrichment_batch_items",
        sa.Column("id", BIGINT_PK, autoincrement=True, nullable=False),
        sa.Column("batch_id", sa.String(length=32), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("contact_id", sa.String(length=40), nullable=False),
        sa.Column("status", sa.String(length=24), nullable=False),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("completed_at", WHEN, nullable=True),
        sa.ForeignKeyConstraint(
            ["batch_id"],
            ["enrichment_batches.id"],
            name=op.f("fk_enrichment_batch_items_batch_id_enrichment_batches"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_enrichment_batch_items")),
    )
    op.create_index(op.f("ix_enrichment_batch_items_batch_id"), "enrichment_batch_items", ["batch_id"])


def downgrade() -> None:
    for table in (
        "enrichment_batch_items",
        "enrichment_batches",
        "enrichment_values",
        "enrichment_cache",
        "enrichment_usage",
        "enrichment_keys",
    ):
        op.drop_table(table)
