"""signals: intent signals and their commit-order counter

Revision ID: 20261122_signals
Revises: 20261122_registries
Create Date: 2026-11-22 05:15:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261122_signals"
down_revision: str | Sequence[str] | None = "20261122_registries"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIGINT_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "signals",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("sequence", sa.BigInteger(), nullable=False),
        sa.Column("category", sa.String(length=24), nullable=False),
        sa.Column("industry", sa.String(length=40), nullable=False),
        sa.Column("intent_level", sa.String(length=8), nullable=False),
        sa.Column("source_status", sa.String(length=16), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("topic", sa.String(length=200), nullable=True),
        sa.Column("state", sa.String(length=2), nullable=False),
        sa.Column("city", sa.String(length=120), nullable=True),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("evidence", sa.JSON(), nullable=False),
        sa.Column("contact_id", BIGINT_PK, nullable=True),
        sa.Column("source", sa.String(length=40), nullable=False),
        sa.Column("source_record_id", sa.String(length=200), nullable=True),
        sa.Column("observed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["contact_id"], ["contacts.id"], name=op.f("fk_signals_contact_id_contacts"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_signals")),
        sa.UniqueConstraint("sequence", name=op.f("uq_signals_sequence")),
        sa.UniqueConstraint("source", "source_record_id", name=op.f("uq_signals_source_source_record_id")),
    )
    for columns in (["category", "sequence"], ["industry", "sequence"], ["state", "sequence"],
                    ["intent_level", "sequence"], ["source_status", "sequence"]):  # fmt: skip
        op.create_index(op.f(f"ix_signals_{'_'.join(columns)}"), "signals", columns)
    op.create_index(op.f("ix_signals_created_at"), "signals", ["created_at"])
    op.create_index(op.f("ix_signals_contact_id"), "signals", ["contact_id"])

    counters = op.create_table(
        "signal_counters",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_signal_counters")),
    )
    op.bulk_insert(counters, [{"id": 1, "value": 0}])


def downgrade() -> None:
    op.drop_table("signal_counters")
    op.drop_table("signals")
