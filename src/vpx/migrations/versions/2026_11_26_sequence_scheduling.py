"""sequence scheduling: due steps looked up per running sequence, a mailbox's last sends by id

Revision ID: 20261126_sequence_scheduling
Revises: 20261126_sequences
Create Date: 2026-11-26 18:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "20261126_sequence_scheduling"
down_revision: str | Sequence[str] | None = "20261126_sequences"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index(op.f("ix_enrollments_status_next_due_at"), table_name="enrollments")
    op.create_index(
        op.f("ix_enrollments_sequence_id_status_next_due_at"), "enrollments", ["sequence_id", "status", "next_due_at"]
    )
    op.create_index(op.f("ix_sequence_messages_mailbox_id_id"), "sequence_messages", ["mailbox_id", "id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_sequence_messages_mailbox_id_id"), table_name="sequence_messages")
    op.drop_index(op.f("ix_enrollments_sequence_id_status_next_due_at"), table_name="enrollments")
    op.create_index(op.f("ix_enrollments_status_next_due_at"), "enrollments", ["status", "next_due_at"])
