"""data sources: the publishers' files and portals the worker keeps in sync, with their watermarks

Revision ID: 20261201_data_sources
Revises: 20261130_enrichment_previous
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261201_data_sources"
down_revision: str | Sequence[str] | None = "20261130_enrichment_previous"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WHEN = sa.DateTime(timezone=True)
ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "data_sources",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=63), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("every_seconds", sa.Integer(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("options_sealed", sa.Text(), nullable=True),
        sa.Column("mapping", sa.Text(), nullable=True),
        sa.Column("mapping_name", sa.String(length=100), nullable=True),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("run_requested", sa.Boolean(), nullable=False),
        sa.Column("next_run_at", WHEN, nullable=False),
        sa.Column("lease_owner", sa.String(length=200), nullable=True),
        sa.Column("lease_until", WHEN, nullable=True),
        sa.Column("watermark", sa.JSON(), nullable=False),
        sa.Column("consecutive_failures", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("last_run", sa.JSON(), nullable=True),
        sa.Column("last_run_at", WHEN, nullable=True),
        sa.Column("last_success_at", WHEN, nullable=True),
        sa.Column("newest_record_at", WHEN, nullable=True),
        sa.Column("stale_warned", sa.Boolean(), nullable=False),
        sa.Column("runs_ok", sa.Integer(), nullable=False),
        sa.Column("runs_not_modified", sa.Integer(), nullable=False),
        sa.Column("runs_failed", sa.Integer(), nullable=False),
        sa.Column("rows_created", sa.BigInteger(), nullable=False),
        sa.Column("rows_updated", sa.BigInteger(), nullable=False),
        sa.Column("rows_deactivated", sa.BigInteger(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_data_sources")),
        sa.UniqueConstraint("name", name=op.f("uq_data_sources_name")),
    )
    op.create_index(op.f("ix_data_sources_next_run_at"), "data_sources", ["next_run_at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_data_sources_next_run_at"), table_name="data_sources")
    op.drop_table("data_sources")
