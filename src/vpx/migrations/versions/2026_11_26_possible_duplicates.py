"""possible_duplicates: contacts' strong identifiers, and the pairs entity resolution held apart

``contacts.identifiers`` keeps, beside the phone and website columns, what identifies a business
beyond doubt ("kind:value" tokens: npi, ein, cik, licences, further phones and domains); entity
resolution never joins two records that disagree on one of them. Existing contacts get the NPIs and
CSLB licence numbers of their registry records and the CIKs of the companies linked to them.
``possible_duplicates`` lists the pairs a rule would have joined but conflicting evidence kept apart,
for an operator to merge or dismiss (`vpx registries duplicates`).

Revision ID: 20261126_possible_duplicates
Revises: 20261124_block_house
Create Date: 2026-11-26 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261126_possible_duplicates"
down_revision: str | Sequence[str] | None = "20261124_block_house"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIGINT_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _backfill(sqlite: bool) -> None:
    aggregate = "group_concat(token, ' ')" if sqlite else "string_agg(token, ' ' ORDER BY token)"
    tokens = (
        "SELECT CASE s.registry WHEN 'nppes' THEN 'npi:' || s.record_id "
        "ELSE 'lic:ca:contractor:' || s.record_id END AS token "
        "FROM contact_sources s WHERE s.contact_id = contacts.id AND s.registry IN ('nppes', 'cslb') "
        "UNION SELECT 'cik:' || CAST(c.cik AS TEXT) AS token FROM companies c WHERE c.contact_id = contacts.id"
    )
    op.execute(
        f"UPDATE contacts SET identifiers = (SELECT {aggregate} FROM ({tokens}) AS t) "
        "WHERE EXISTS (SELECT 1 FROM contact_sources s WHERE s.contact_id = contacts.id "
        "AND s.registry IN ('nppes', 'cslb')) "
        "OR EXISTS (SELECT 1 FROM companies c WHERE c.contact_id = contacts.id)"
    )


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    # A plain ADD COLUMN on both databases (SQLite's batch mode would rebuild the table and its triggers).
    op.add_column("contacts", sa.Column("identifiers", sa.Text(), nullable=True))
    _backfill(sqlite)
    op.create_table(
        "possible_duplicates",
        sa.Column("id", BIGINT_PK, autoincrement=True, nullable=False),
        sa.Column("contact_id", BIGINT_PK, nullable=False),
        sa.Column("other_contact_id", BIGINT_PK, nullable=False),
        sa.Column("reason", sa.String(length=16), nullable=False),
        sa.Column("name_score", sa.Integer(), nullable=False),
        sa.Column("found_by", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("resolved_by", sa.String(length=120), nullable=True),
        sa.ForeignKeyConstraint(
            ["contact_id"], ["contacts.id"], name=op.f("fk_possible_duplicates_contact_id_contacts"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["other_contact_id"],
            ["contacts.id"],
            name=op.f("fk_possible_duplicates_other_contact_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_possible_duplicates")),
        sa.UniqueConstraint(
            "contact_id", "other_contact_id", name=op.f("uq_possible_duplicates_contact_id_other_contact_id")
        ),
    )
    op.create_index(op.f("ix_possible_duplicates_status_id"), "possible_duplicates", ["status", "id"])
    op.create_index(op.f("ix_possible_duplicates_other_contact_id"), "possible_duplicates", ["other_contact_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_possible_duplicates_other_contact_id"), table_name="possible_duplicates")
    op.drop_index(op.f("ix_possible_duplicates_status_id"), table_name="possible_duplicates")
    op.drop_table("possible_duplicates")
    op.drop_column("contacts", "identifiers")
