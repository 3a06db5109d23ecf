"""data refunds: buyers' reports on wrong fields, their trail, the values found bad, the refunds paid
for them, and the sequences' hard bounces waiting for the worker's review

Revision ID: 20261201_data_refunds
Revises: 20261201_email_deliverability
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261201_data_refunds"
down_revision: str | Sequence[str] | None = "20261201_email_deliverability"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WHEN = sa.DateTime(timezone=True)
ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _account(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["account_id"], ["accounts.id"], name=op.f(f"fk_{table}_account_id_accounts"), ondelete="CASCADE"
    )


def _contact(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["contact_id"], ["contacts.id"], name=op.f(f"fk_{table}_contact_id_contacts"), ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "contact_reports",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("contact_id", ID, nullable=False),
        sa.Column("field", sa.String(length=16), nullable=False),
        sa.Column("problem", sa.String(length=32), nullable=False),
        sa.Column("note", sa.String(length=500), nullable=False),
        sa.Column("value", sa.String(length=500), nullable=False),
        sa.Column("value_key", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("resolved_at", WHEN, nullable=True),
        _account("contact_reports"),
        _contact("contact_reports"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_contact_reports")),
        sa.UniqueConstraint(
            "account_id", "contact_id", "field", name=op.f("uq_contact_reports_account_id_contact_id_field")
        ),
    )
    op.create_index(op.f("ix_contact_reports_contact_id_field"), "contact_reports", ["contact_id", "field"])
    op.create_index(op.f("ix_contact_reports_status_id"), "contact_reports", ["status", "id"])

    op.create_table(
        "contact_report_actions",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("report_id", ID, nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("actor", sa.String(length=120), nullable=False),
        sa.Column("note", sa.String(length=500), nullable=False),
        sa.Column("at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["report_id"],
            ["contact_reports.id"],
            name=op.f("fk_contact_report_actions_report_id_contact_reports"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_contact_report_actions")),
    )
    op.create_index(op.f("ix_contact_report_actions_report_id"), "contact_report_actions", ["report_id"])

    op.create_table(
        "bad_fields",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("contact_id", ID, nullable=False),
        sa.Column("field", sa.String(length=16), nullable=False),
        sa.Column("value_key", sa.String(length=64), nullable=False),
        sa.Column("problem", sa.String(length=32), nullable=False),
        sa.Column("decided_by", sa.String(length=120), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        _contact("bad_fields"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bad_fields")),
        sa.UniqueConstraint("contact_id", "field", "value_key", name=op.f("uq_bad_fields_contact_id_field_value_key")),
    )

    op.create_table(
        "data_refunds",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("contact_id", ID, nullable=False),
        sa.Column("field", sa.String(length=16), nullable=False),
        sa.Column("credits", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.String(length=16), nullable=False),
        sa.Column("report_id", ID, nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        _account("data_refunds"),
        _contact("data_refunds"),
        sa.ForeignKeyConstraint(
            ["report_id"],
            ["contact_reports.id"],
            name=op.f("fk_data_refunds_report_id_contact_reports"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_data_refunds")),
        sa.UniqueConstraint(
            "account_id", "contact_id", "field", name=op.f("uq_data_refunds_account_id_contact_id_field")
        ),
    )
    op.create_index(op.f("ix_data_refunds_created_at"), "data_refunds", ["created_at"])

    op.create_table(
        "sequence_bounces",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("contact_id", ID, nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("bounced_at", WHEN, nullable=False),
        sa.Column("reviewed_at", WHEN, nullable=True),
        _account("sequence_bounces"),
        _contact("sequence_bounces"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sequence_bounces")),
    )
    op.create_index(op.f("ix_sequence_bounces_contact_id"), "sequence_bounces", ["contact_id"])
    op.create_index(
        "ix_sequence_bounces_waiting",
        "sequence_bounces",
        ["id"],
        sqlite_where=sa.text("reviewed_at IS NULL"),
        postgresql_where=sa.text("reviewed_at IS NULL"),
    )


def downgrade() -> None:
    op.drop_table("sequence_bounces")
    op.drop_table("data_refunds")
    op.drop_table("bad_fields")
    op.drop_table("contact_report_actions")
    op.drop_table("contact_reports")
