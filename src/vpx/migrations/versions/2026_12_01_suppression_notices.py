"""suppression notices: the contacts each account revealed and that were suppressed since

One row per account and contact (suppression_notices), written with the suppression that covers the
contact; its id orders the account's feed (GET /api/v1/suppressions/feed). Suppressions already on
the list are written in now, oldest first, for the accounts that revealed what they cover: they show
in the feed and the dashboard's count; no webhook event is sent for them.

Revision ID: 20261201_suppression_notices
Revises: 20261201_data_sources
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261201_suppression_notices"
down_revision: str | Sequence[str] | None = "20261201_data_sources"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WHEN = sa.DateTime(timezone=True)
ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
CLASSES = ("opt_out", "do_not_contact", "fcra", "unsubscribed")
BATCH = 1000


def upgrade() -> None:
    op.create_table(
        "suppression_notices",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("contact_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("suppression_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("suppressed_at", WHEN, nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_suppression_notices_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["contact_id"], ["contacts.id"], name=op.f("fk_suppression_notices_contact_id_contacts"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["suppression_id"],
            ["suppressions.id"],
            name=op.f("fk_suppression_notices_suppression_id_suppressions"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_suppression_notices")),
        sa.UniqueConstraint("account_id", "contact_id", name=op.f("uq_suppression_notices_account_id_contact_id")),
    )
    op.create_index(op.f("ix_suppression_notices_account_id_id"), "suppression_notices", ["account_id", "id"])
    _write_past_notices()


def _write_past_notices() -> None:
    """The accounts that revealed a contact already suppressed, oldest suppression first; a contact two
    entries cover is noted once, for the first."""
    bind = op.get_bind()
    suppressions = sa.table(
        "suppressions",
        sa.column("id", sa.Integer()),
        sa.column("kind", sa.String()),
        sa.column("value", sa.String()),
        sa.column("reason", sa.String()),
        # Times pass through as the database holds them (SQLite: text), untouched.
        sa.column("created_at"),
    )
    contacts = sa.table("contacts", sa.column("id", sa.Integer()), sa.column("phone"), sa.column("email"))
    reveals = sa.table("reveals", sa.column("account_id", sa.String()), sa.column("contact_id", sa.Integer()))
    covered = sa.or_(
        sa.and_(
            suppressions.c.kind == "contact",
            suppressions.c.value == sa.literal("ct_") + sa.cast(contacts.c.id, sa.String()),
        ),
        sa.and_(suppressions.c.kind == "phone", suppressions.c.value == contacts.c.phone),
        sa.and_(suppressions.c.kind == "email", suppressions.c.value == sa.func.lower(contacts.c.email)),
    )
    rows = bind.execute(
        sa.select(
            reveals.c.account_id,
            reveals.c.contact_id,
            suppressions.c.id,
            suppressions.c.reason,
            suppressions.c.created_at,
        )
        .select_from(reveals.join(contacts, contacts.c.id == reveals.c.contact_id).join(suppressions, covered))
        .order_by(suppressions.c.created_at, suppressions.c.id, reveals.c.account_id, reveals.c.contact_id)
    )
    notices = sa.table(
        "suppression_notices",
        sa.column("account_id", sa.String()),
        sa.column("contact_id", sa.Integer()),
        sa.column("suppression_id", sa.Integer()),
        sa.column("reason", sa.String()),
        sa.column("suppressed_at"),
        sa.column("created_at"),
    )
    seen: set[tuple[str, int]] = set()
    batch: list[dict[str, object]] = []
    for account_id, contact_id, suppression_id, reason, created_at in rows.all():
        if (account_id, contact_id) in seen:
            continue
        seen.add((account_id, contact_id))
        batch.append(
            {
                "account_id": account_id,
                "contact_id": contact_id,
                "suppression_id": suppression_id,
                "reason": reason if reason in CLASSES else "do_not_contact",
                "suppressed_at": created_at,
                "created_at": created_at,
            }
        )
        if len(batch) >= BATCH:
            bind.execute(sa.insert(notices), batch)
            batch = []
    if batch:
        bind.execute(sa.insert(notices), batch)


def downgrade() -> None:
    op.drop_index(op.f("ix_suppression_notices_account_id_id"), table_name="suppression_notices")
    op.drop_table("suppression_notices")
