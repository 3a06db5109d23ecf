"""topic_activity: research activity per business, topic and day, for topic_surge signals

Revision ID: 20261122_topic_activity
Revises: 20261122_autobuy
Create Date: 2026-11-22 10:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261122_topic_activity"
down_revision: str | Sequence[str] | None = "20261122_autobuy"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIGINT_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "topic_activity",
        sa.Column("contact_id", BIGINT_PK, autoincrement=False, nullable=False),
        sa.Column("topic", sa.String(length=200), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("events", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["contact_id"], ["contacts.id"], name=op.f("fk_topic_activity_contact_id_contacts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("contact_id", "topic", "day", name=op.f("pk_topic_activity")),
    )
    op.create_index(op.f("ix_topic_activity_day_topic"), "topic_activity", ["day", "topic"])


def downgrade() -> None:
    op.drop_table("topic_activity")
