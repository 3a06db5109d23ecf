"""registries: import bookkeeping, NUCC taxonomy, decision-makers, SEC companies

Revision ID: 20261122_registries
Revises: 20261122_core
Create Date: 2026-11-22 02:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261122_registries"
down_revision: str | Sequence[str] | None = "20261122_core"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIGINT_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "registry_records",
        sa.Column("id", BIGINT_PK, autoincrement=True, nullable=False),
        sa.Column("registry", sa.String(length=32), nullable=False),
        sa.Column("record_id", sa.String(length=64), nullable=False),
        sa.Column("contact_id", BIGINT_PK, nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("owns_contact", sa.Boolean(), nullable=False),
        sa.Column("registry_status", sa.String(length=64), nullable=True),
        sa.Column("row_hash", sa.String(length=16), nullable=False),
        sa.Column("file_date", sa.Date(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["contact_id"], ["contacts.id"], name=op.f("fk_registry_records_contact_id_contacts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_registry_records")),
        sa.UniqueConstraint("registry", "record_id", name=op.f("uq_registry_records_registry_record_id")),
    )
    op.create_index(op.f("ix_registry_records_contact_id"), "registry_records", ["contact_id"])

    op.create_table(
        "taxonomy_codes",
        sa.Column("code", sa.String(length=10), nullable=False),
        sa.Column("grouping", sa.String(length=200), nullable=False),
        sa.Column("classification", sa.String(length=200), nullable=False),
        sa.Column("specialization", sa.String(length=200), nullable=True),
        sa.Column("specialty", sa.String(length=200), nullable=False),
        sa.Column("vertical", sa.String(length=40), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("code", name=op.f("pk_taxonomy_codes")),
    )

    op.create_table(
        "decision_makers",
        sa.Column("id", BIGINT_PK, autoincrement=True, nullable=False),
        sa.Column("contact_id", BIGINT_PK, nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=True),
        sa.Column("role", sa.String(length=32), nullable=False),
        sa.Column("phone", sa.String(length=20), nullable=True),
        sa.Column("registry", sa.String(length=32), nullable=False),
        sa.Column("record_id", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["contact_id"], ["contacts.id"], name=op.f("fk_decision_makers_contact_id_contacts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_decision_makers")),
    )
    op.create_index(op.f("ix_decision_makers_contact_id"), "decision_makers", ["contact_id"])
    op.create_index(op.f("ix_decision_makers_registry_record_id"), "decision_makers", ["registry", "record_id"])

    op.create_table(
        "companies",
        sa.Column("cik", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("name", sa.String(length=300), nullable=False),
        sa.Column("name_key", sa.String(length=300), nullable=False),
        sa.Column("ticker", sa.String(length=16), nullable=True),
        sa.Column("exchange", sa.String(length=16), nullable=True),
        sa.Column("contact_id", BIGINT_PK, nullable=True),
        sa.Column("last_filed_on", sa.Date(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["contact_id"], ["contacts.id"], name=op.f("fk_companies_contact_id_contacts"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("cik", name=op.f("pk_companies")),
    )
    op.create_index(op.f("ix_companies_name_key"), "companies", ["name_key"])
    op.create_index(op.f("ix_companies_contact_id"), "companies", ["contact_id"])

    op.create_table(
        "company_tickers",
        sa.Column("ticker", sa.String(length=16), nullable=False),
        sa.Column("cik", sa.BigInteger(), nullable=False),
        sa.Column("exchange", sa.String(length=16), nullable=True),
        sa.ForeignKeyConstraint(
            ["cik"], ["companies.cik"], name=op.f("fk_company_tickers_cik_companies"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("ticker", name=op.f("pk_company_tickers")),
    )
    op.create_index(op.f("ix_company_tickers_cik"), "company_tickers", ["cik"])

    # Entity resolution blocks on (state, city, first word of the name after a leading "the"): an
    # expression index, the same expression as vpx/registries/resolution.py queries.
    sqlite = op.get_bind().dialect.name == "sqlite"
    op.execute(f"CREATE INDEX ix_contacts_block ON contacts (state, city_key, ({block_expression(sqlite=sqlite)}))")


def block_expression(*, sqlite: bool, table: str = "") -> str:
    """SQL for vpx.contacts.normalise.block_token(name_key)."""
    column = f"{table}name_key"
    rest = f"(CASE WHEN substr({column}, 1, 4) = 'the ' THEN substr({column}, 5) ELSE {column} END)"
    if sqlite:
        return f"substr({rest}, 1, instr({rest} || ' ', ' ') - 1)"
    return f"split_part({rest}, ' ', 1)"


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_contacts_block")
    op.drop_table("company_tickers")
    op.drop_table("companies")
    op.drop_table("decision_makers")
    op.drop_table("taxonomy_codes")
    op.drop_table("registry_records")
