"""visitors: sites, visits (no full address for unidentified ones), alerts, imported address ranges;
contacts.website_domain (the registrable domain reverse DNS is matched against) (D33)

Revision ID: 20261126_visitors
Revises: 20261126_sequence_scheduling
Create Date: 2026-11-26 20:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261126_visitors"
down_revision: str | Sequence[str] | None = "20261126_sequence_scheduling"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BIGINT_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)
BATCH = 5000


def _fk(table: str, column: str, target: str, ondelete: str = "CASCADE") -> sa.ForeignKeyConstraint:
    referred = target.split(".")[0]
    return sa.ForeignKeyConstraint([column], [target], name=op.f(f"fk_{table}_{column}_{referred}"), ondelete=ondelete)


def _backfill_website_domains() -> None:
    """Every website's registrable domain, computed here as the service computes it (the Public Suffix
    List is not in the database)."""
    from vpx.contacts.identifiers import registrable_domain

    bind = op.get_bind()
    after = 0
    while True:
        rows = bind.execute(
            sa.text("SELECT id, website FROM contacts WHERE id > :after AND website IS NOT NULL ORDER BY id LIMIT :n"),
            {"after": after, "n": BATCH},
        ).all()
        if not rows:
            return
        after = rows[-1][0]
        updates = [{"i": i, "d": registrable_domain(w)} for i, w in rows if registrable_domain(w)]
        if updates:
            bind.execute(sa.text("UPDATE contacts SET website_domain = :d WHERE id = :i"), updates)


def upgrade() -> None:
    # A plain ADD COLUMN on both databases (SQLite's batch mode would rebuild the table and its triggers).
    op.add_column("contacts", sa.Column("website_domain", sa.String(length=253), nullable=True))
    _backfill_website_domains()
    op.create_index(op.f("ix_contacts_website_domain"), "contacts", ["website_domain"])
    op.create_table(
        "visitor_sites",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("domain", sa.String(length=253), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=True),
        sa.Column("topic", sa.String(length=200), nullable=False),
        sa.Column("site_key", sa.String(length=40), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        _fk("visitor_sites", "account_id", "accounts.id"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_visitor_sites")),
        sa.UniqueConstraint("site_key", name=op.f("uq_visitor_sites_site_key")),
    )
    op.create_index(op.f("ix_visitor_sites_account_id"), "visitor_sites", ["account_id"])
    op.create_table(
        "visits",
        sa.Column("id", BIGINT_PK, autoincrement=True, nullable=False),
        sa.Column("site_id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("occurred_at", WHEN, nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("referrer", sa.String(length=2048), nullable=True),
        sa.Column("title", sa.String(length=300), nullable=True),
        sa.Column("channel", sa.String(length=8), nullable=False),
        sa.Column("identified", sa.Boolean(), nullable=False),
        sa.Column("contact_id", BIGINT_PK, nullable=True),
        sa.Column("method", sa.String(length=16), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("reason", sa.String(length=24), nullable=True),
        sa.Column("network", sa.String(length=64), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        _fk("visits", "site_id", "visitor_sites.id"),
        _fk("visits", "account_id", "accounts.id"),
        _fk("visits", "contact_id", "contacts.id", ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_visits")),
    )
    op.create_index(op.f("ix_visits_account_id_occurred_at"), "visits", ["account_id", "occurred_at"])
    op.create_index(op.f("ix_visits_site_id_occurred_at"), "visits", ["site_id", "occurred_at"])
    op.create_index(op.f("ix_visits_occurred_at"), "visits", ["occurred_at"])
    op.create_table(
        "visitor_alerts",
        sa.Column("site_id", sa.String(length=32), nullable=False),
        sa.Column("contact_id", BIGINT_PK, nullable=False),
        sa.Column("last_alert_at", WHEN, nullable=False),
        _fk("visitor_alerts", "site_id", "visitor_sites.id"),
        _fk("visitor_alerts", "contact_id", "contacts.id"),
        sa.PrimaryKeyConstraint("site_id", "contact_id", name=op.f("pk_visitor_alerts")),
    )
    op.create_table(
        "ip_range_sources",
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("format", sa.String(length=16), nullable=False),
        sa.Column("ranges", sa.Integer(), nullable=False),
        sa.Column("imported_at", WHEN, nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_ip_range_sources")),
    )
    op.create_table(
        "ip_ranges",
        sa.Column("id", BIGINT_PK, autoincrement=True, nullable=False),
        sa.Column("source", sa.String(length=100), nullable=False),
        sa.Column("family", sa.SmallInteger(), nullable=False),
        sa.Column("first", sa.String(length=40), nullable=False),
        sa.Column("last", sa.String(length=40), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("domain", sa.String(length=253), nullable=True),
        sa.Column("contact_id", sa.BigInteger(), nullable=True),
        sa.Column("organisation", sa.String(length=200), nullable=True),
        sa.Column("asn", sa.BigInteger(), nullable=True),
        _fk("ip_ranges", "source", "ip_range_sources.name"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ip_ranges")),
    )
    op.create_index(op.f("ix_ip_ranges_source"), "ip_ranges", ["source"])


def downgrade() -> None:
    op.drop_index(op.f("ix_ip_ranges_source"), table_name="ip_ranges")
    op.drop_table("ip_ranges")
    op.drop_table("ip_range_sources")
    op.drop_table("visitor_alerts")
    op.drop_index(op.f("ix_visits_occurred_at"), table_name="visits")
    op.drop_index(op.f("ix_visits_site_id_occurred_at"), table_name="visits")
    op.drop_index(op.f("ix_visits_account_id_occurred_at"), table_name="visits")
    op.drop_table("visits")
    op.drop_index(op.f("ix_visitor_sites_account_id"), table_name="visitor_sites")
    op.drop_table("visitor_sites")
    op.drop_index(op.f("ix_contacts_website_domain"), table_name="contacts")
    op.drop_column("contacts", "website_domain")
