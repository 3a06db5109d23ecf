"""sequences: customers' mailboxes (passwords sealed), sequences and versions, enrollments, messages
sent (Message-IDs stored before SMTP), unsubscribes, inbound mail read (D34)

Revision ID: 20261126_sequences
Revises: 20261126_enrichment
Create Date: 2026-11-26 15:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261126_sequences"
down_revision: str | Sequence[str] | None = "20261126_enrichment"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIGINT_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    referred = target.split(".")[0]
    return sa.ForeignKeyConstraint([column], [target], name=op.f(f"fk_{table}_{column}_{referred}"), ondelete="CASCADE")


def upgrade() -> None:
    op.create_table(
        "mailboxes",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("from_name", sa.String(length=200), nullable=True),
        sa.Column("smtp_host", sa.String(length=255), nullable=False),
        sa.Column("smtp_port", sa.Integer(), nullable=False),
        sa.Column("smtp_security", sa.String(length=16), nullable=False),
        sa.Column("smtp_username", sa.String(length=320), nullable=True),
        sa.Column("smtp_password_sealed", sa.Text(), nullable=True),
        sa.Column("imap_host", sa.String(length=255), nullable=True),
        sa.Column("imap_port", sa.Integer(), nullable=True),
        sa.Column("imap_security", sa.String(length=16), nullable=True),
        sa.Column("imap_username", sa.String(length=320), nullable=True),
        sa.Column("imap_password_sealed", sa.Text(), nullable=True),
        sa.Column("daily_limit", sa.Integer(), nullable=False),
        sa.Column("send_interval_seconds", sa.Integer(), nullable=False),
        sa.Column("postal_address", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("pause_reason", sa.String(length=200), nullable=True),
        sa.Column("next_send_at", WHEN, nullable=True),
        sa.Column("imap_uidvalidity", sa.Integer(), nullable=True),
        sa.Column("imap_last_uid", sa.Integer(), nullable=True),
        sa.Column("imap_polled_at", WHEN, nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
        _fk("mailboxes", "account_id", "accounts.id"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mailboxes")),
    )
    op.create_index(op.f("ix_mailboxes_account_id"), "mailboxes", ["account_id"])
    op.create_table(
        "sequences",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("mailbox_id", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("pause_reason", sa.String(length=200), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
        _fk("sequences", "account_id", "accounts.id"),
        _fk("sequences", "mailbox_id", "mailboxes.id"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sequences")),
    )
    op.create_index(op.f("ix_sequences_account_id"), "sequences", ["account_id"])
    op.create_index(op.f("ix_sequences_mailbox_id"), "sequences", ["mailbox_id"])
    op.create_table(
        "sequence_versions",
        sa.Column("id", BIGINT_PK, autoincrement=True, nullable=False),
        sa.Column("sequence_id", sa.String(length=32), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("steps", sa.JSON(), nullable=False),
        sa.Column("send_window", sa.JSON(), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        _fk("sequence_versions", "sequence_id", "sequences.id"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sequence_versions")),
        sa.UniqueConstraint("sequence_id", "version", name=op.f("uq_sequence_versions_sequence_id_version")),
    )
    op.create_table(
        "enrollments",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("sequence_id", sa.String(length=32), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("contact_id", BIGINT_PK, nullable=False),
        sa.Column("person_key", sa.String(length=200), nullable=False),
        sa.Column("person_name", sa.String(length=200), nullable=True),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("stop_reason", sa.String(length=64), nullable=True),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("next_due_at", WHEN, nullable=True),
        sa.Column("thread_message_id", sa.String(length=300), nullable=True),
        sa.Column("unsubscribe_token", sa.String(length=64), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
        _fk("enrollments", "account_id", "accounts.id"),
        _fk("enrollments", "sequence_id", "sequences.id"),
        _fk("enrollments", "contact_id", "contacts.id"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_enrollments")),
        sa.UniqueConstraint(
            "sequence_id", "contact_id", "person_key", name=op.f("uq_enrollments_sequence_id_contact_id_person_key")
        ),
        sa.UniqueConstraint("unsubscribe_token", name=op.f("uq_enrollments_unsubscribe_token")),
    )
    op.create_index(op.f("ix_enrollments_status_next_due_at"), "enrollments", ["status", "next_due_at"])
    op.create_index(op.f("ix_enrollments_account_id_email"), "enrollments", ["account_id", "email"])
    op.create_index(op.f("ix_enrollments_sequence_id_id"), "enrollments", ["sequence_id", "id"])
    op.create_table(
        "sequence_messages",
        sa.Column("id", BIGINT_PK, autoincrement=True, nullable=False),
        sa.Column("enrollment_id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("mailbox_id", sa.String(length=32), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("message_id", sa.String(length=300), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", WHEN, nullable=True),
        sa.Column("lease_until", WHEN, nullable=True),
        sa.Column("last_reply", sa.Text(), nullable=True),
        sa.Column("subject", sa.Text(), nullable=True),
        sa.Column("sent_at", WHEN, nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        _fk("sequence_messages", "enrollment_id", "enrollments.id"),
        _fk("sequence_messages", "account_id", "accounts.id"),
        _fk("sequence_messages", "mailbox_id", "mailboxes.id"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sequence_messages")),
        sa.UniqueConstraint("enrollment_id", "step", name=op.f("uq_sequence_messages_enrollment_id_step")),
        sa.UniqueConstraint("message_id", name=op.f("uq_sequence_messages_message_id")),
    )
    op.create_index(op.f("ix_sequence_messages_mailbox_id_sent_at"), "sequence_messages", ["mailbox_id", "sent_at"])
    op.create_index(op.f("ix_sequence_messages_status_lease_until"), "sequence_messages", ["status", "lease_until"])
    op.create_table(
        "account_unsubscribes",
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("enrollment_id", sa.String(length=32), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        _fk("account_unsubscribes", "account_id", "accounts.id"),
        sa.PrimaryKeyConstraint("account_id", "email", name=op.f("pk_account_unsubscribes")),
    )
    op.create_table(
        "inbound_messages",
        sa.Column("id", BIGINT_PK, autoincrement=True, nullable=False),
        sa.Column("mailbox_id", sa.String(length=32), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("enrollment_id", sa.String(length=32), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        _fk("inbound_messages", "mailbox_id", "mailboxes.id"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_inbound_messages")),
        sa.UniqueConstraint("mailbox_id", "fingerprint", name=op.f("uq_inbound_messages_mailbox_id_fingerprint")),
    )


def downgrade() -> None:
    for table in (
        "inbound_messages",
        "account_unsubscribes",
        "sequence_messages",
        "enrollments",
        "sequence_versions",
        "sequences",
        "mailboxes",
    ):
        op.drop_table(table)
