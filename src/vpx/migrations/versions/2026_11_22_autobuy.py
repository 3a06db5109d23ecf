"""autobuy: auto-buy rules, their (vertical, state) index and their purchases (D24)

Revision ID: 20261122_autobuy
Revises: 20261122_signals
Create Date: 2026-11-22 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261122_autobuy"
down_revision: str | Sequence[str] | None = "20261122_signals"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIGINT_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "auto_buy_rules",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("industries", sa.JSON(), nullable=False),
        sa.Column("states", sa.JSON(), nullable=False),
        sa.Column("min_confidence", sa.Float(), nullable=False),
        sa.Column("categories", sa.JSON(), nullable=False),
        sa.Column("intent_levels", sa.JSON(), nullable=False),
        sa.Column("budget_credits", sa.BigInteger(), nullable=True),
        sa.Column("daily_cap", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("paused_reason", sa.String(length=200), nullable=True),
        sa.Column("spent_total", sa.BigInteger(), nullable=False),
        sa.Column("purchases_total", sa.Integer(), nullable=False),
        sa.Column("spent_day", sa.Date(), nullable=True),
        sa.Column("spent_today", sa.BigInteger(), nullable=False),
        sa.Column("purchases_today", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_auto_buy_rules_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_auto_buy_rules")),
    )
    op.create_index(op.f("ix_auto_buy_rules_account_id"), "auto_buy_rules", ["account_id"])
    op.create_table(
        "auto_buy_rule_keys",
        sa.Column("rule_id", sa.String(length=32), nullable=False),
        sa.Column("industry", sa.String(length=40), nullable=False),
        sa.Column("state", sa.String(length=2), nullable=False),
        sa.ForeignKeyConstraint(
            ["rule_id"], ["auto_buy_rules.id"], name=op.f("fk_auto_buy_rule_keys_rule_id_auto_buy_rules"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("rule_id", "industry", "state", name=op.f("pk_auto_buy_rule_keys")),
    )  # fmt: skip
    op.create_index(
        op.f("ix_auto_buy_rule_keys_industry_state_rule_id"), "auto_buy_rule_keys", ["industry", "state", "rule_id"]
    )
    op.create_table(
        "auto_buy_purchases",
        sa.Column("id", BIGINT_PK, autoincrement=True, nullable=False),
        sa.Column("rule_id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("signal_id", sa.String(length=24), nullable=False),
        sa.Column("contact_id", BIGINT_PK, nullable=False),
        sa.Column("credits_charged", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["rule_id"], ["auto_buy_rules.id"], name=op.f("fk_auto_buy_purchases_rule_id_auto_buy_rules"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_auto_buy_purchases_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["signal_id"], ["signals.id"], name=op.f("fk_auto_buy_purchases_signal_id_signals"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["contact_id"], ["contacts.id"], name=op.f("fk_auto_buy_purchases_contact_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_auto_buy_purchases")),
        sa.UniqueConstraint("account_id", "contact_id", name=op.f("uq_auto_buy_purchases_account_id_contact_id")),
    )  # fmt: skip
    op.create_index(op.f("ix_auto_buy_purchases_account_id_id"), "auto_buy_purchases", ["account_id", "id"])
    op.create_index(op.f("ix_auto_buy_purchases_rule_id_id"), "auto_buy_purchases", ["rule_id", "id"])


def downgrade() -> None:
    op.drop_table("auto_buy_purchases")
    op.drop_table("auto_buy_rule_keys")
    op.drop_table("auto_buy_rules")
