"""email deliverability: each email's status, flags and check time, the MX answers per domain, and
the status as a search filter

- ``contacts``: ``email_status`` (unknown until the worker checks it), ``email_flags``,
  ``email_checked_at``, ``email_domain``, and partial indexes for the worker's look-ups;
- a trigger puts a changed email back to ``unknown`` (whatever path wrote it: imports, contributions,
  direct SQL), so a status never describes another address than the one stored;
- ``email_domains``: each domain's last MX answer and when to ask again;
- search: the status becomes a filter term (``#em:<status>``, vpx.contacts.search.terms): the change
  log keeps it and its triggers follow it (as the status as search sees it: none without an email),
  and the postings of the contacts already there get ``#em:unknown`` here.

Revision ID: 20261201_email_deliverability
Revises: 20261128_search_indexes_retired
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pyroaring import BitMap

revision: str = "20261201_email_deliverability"
down_revision: str | Sequence[str] | None = "20261128_search_indexes_retired"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WHEN = sa.DateTime(timezone=True)
CHUNK_BITS = 18  # vpx.contacts.search.postings.CHUNK_BITS, as it was when this was written
SEARCHED = ("business_name", "specialty", "license_type", "industry", "city", "state")
UNCHECKED = "email IS NOT NULL AND email_checked_at IS NULL"
WAITING = "email_status = 'valid_syntax'"


def _search_triggers(dialect: str, *, with_email: bool) -> tuple[str, ...]:
    """The search change log's triggers on contacts (20261128_search_postings's), following the email
    status too when ``with_email``."""
    columns = f"contact_id, was_active, {', '.join(SEARCHED)}" + (", email_status" if with_email else "")
    if dialect == "sqlite":
        old = ", ".join(f"old.{name}" for name in SEARCHED)
        changed = " OR ".join(f"old.{name} IS NOT new.{name}" for name in (*SEARCHED, "status"))
        watched = ", ".join((*SEARCHED, "status"))
        if with_email:
            old += ", CASE WHEN old.email IS NULL THEN NULL ELSE old.email_status END"
            changed += " OR (old.email IS NULL) IS NOT (new.email IS NULL) OR old.email_status IS NOT new.email_status"
            watched += ", email, email_status"
        return (
            f"""CREATE TRIGGER search_changes_au AFTER UPDATE OF {watched} ON contacts
            WHEN {changed} BEGIN
                INSERT INTO search_changes ({columns}) VALUES (old.id, old.status = 'active', {old});
            END""",
            f"""CREATE TRIGGER search_changes_ad AFTER DELETE ON contacts BEGIN
                INSERT INTO search_changes ({columns}) VALUES (old.id, old.status = 'active', {old});
            END""",
        )
    old = ", ".join(f"OLD.{name}" for name in SEARCHED)
    changed = " OR ".join(f"OLD.{name} IS DISTINCT FROM NEW.{name}" for name in (*SEARCHED, "status"))
    if with_email:
        old += ", CASE WHEN OLD.email IS NULL THEN NULL ELSE OLD.email_status END"
        changed += (
            " OR (OLD.email IS NULL) IS DISTINCT FROM (NEW.email IS NULL)"
            " OR OLD.email_status IS DISTINCT FROM NEW.email_status"
        )
    return (
        f"""CREATE OR REPLACE FUNCTION vpx_search_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                INSERT INTO search_changes (contact_id, was_active) VALUES (NEW.id, false);
            ELSIF TG_OP = 'DELETE' OR ({changed}) THEN
                INSERT INTO search_changes ({columns}) VALUES (OLD.id, OLD.status = 'active', {old});
            END IF;
            RETURN NULL;
        END $$""",
    )


# A changed email is unchecked again: its status, flags, check time and domain were the old address's.
SQLITE_EMAIL_CHANGED = """CREATE TRIGGER contacts_email_changed AFTER UPDATE OF email ON contacts
    WHEN old.email IS NOT new.email BEGIN
        UPDATE contacts SET email_status = 'unknown', email_flags = NULL, email_checked_at = NULL,
            email_domain = NULL WHERE id = new.id;
    END"""
POSTGRES_EMAIL_CHANGED = (
    """CREATE FUNCTION vpx_email_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.email IS DISTINCT FROM OLD.email THEN
            NEW.email_status := 'unknown';
            NEW.email_flags := NULL;
            NEW.email_checked_at := NULL;
            NEW.email_domain := NULL;
        END IF;
        RETURN NEW;
    END $$""",
    "CREATE TRIGGER contacts_email_changed BEFORE UPDATE OF email ON contacts "
    "FOR EACH ROW EXECUTE FUNCTION vpx_email_changed()",
)


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    # Columns added in place (no batch copy of the table, which would drop its triggers).
    op.add_column("contacts", sa.Column("email_status", sa.String(length=16), server_default="unknown", nullable=False))
    op.add_column("contacts", sa.Column("email_flags", sa.String(length=32), nullable=True))
    op.add_column("contacts", sa.Column("email_checked_at", WHEN, nullable=True))
    op.add_column("contacts", sa.Column("email_domain", sa.String(length=253), nullable=True))
    for name, column, where in (
        ("ix_contacts_email_unchecked", "id", UNCHECKED),
        ("ix_contacts_email_domain", "email_domain", "email_domain IS NOT NULL"),
        ("ix_contacts_email_waiting", "email_domain", WAITING),
    ):
        op.create_index(name, "contacts", [column], sqlite_where=sa.text(where), postgresql_where=sa.text(where))
    op.create_table(
        "email_domains",
        sa.Column("domain", sa.String(length=253), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=True),
        sa.Column("checked_at", WHEN, nullable=True),
        sa.Column("expires_at", WHEN, nullable=False),
        sa.PrimaryKeyConstraint("domain", name=op.f("pk_email_domains")),
    )
    op.create_index(op.f("ix_email_domains_expires_at"), "email_domains", ["expires_at"])
    op.add_column("search_changes", sa.Column("email_status", sa.String(length=16), nullable=True))

    if dialect == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS search_changes_au")
        op.execute("DROP TRIGGER IF EXISTS search_changes_ad")
        op.execute(SQLITE_EMAIL_CHANGED)
    else:
        for statement in POSTGRES_EMAIL_CHANGED:
            op.execute(statement)
    for statement in _search_triggers(dialect, with_email=True):
        op.execute(statement)
    _postings_of_existing_emails()


def _postings_of_existing_emails() -> None:
    """Every active contact with an email is unknown now: ``#em:unknown`` in the postings. Changes not
    folded in yet keep that as the status they had, which is what the postings hold."""
    bind = op.get_bind()
    highest = bind.execute(sa.text("SELECT max(id) FROM contacts")).scalar()
    if highest is None:
        return
    step = 1 << CHUNK_BITS
    select = sa.text(
        "SELECT id FROM contacts WHERE id >= :low AND id < :high AND status = 'active' AND email IS NOT NULL"
    )
    insert = sa.text("INSERT INTO search_postings (term, chunk, ids, size) VALUES ('#em:unknown', :chunk, :ids, :size)")
    for low in range(0, int(highest) + 1, step):
        bitmap = BitMap(row[0] for row in bind.execute(select, {"low": low, "high": low + step}))
        if bitmap:
            bitmap.run_optimize()
            bind.execute(insert, {"chunk": low >> CHUNK_BITS, "ids": bytes(bitmap.serialize()), "size": len(bitmap)})
    bind.execute(
        sa.text(
            "UPDATE search_changes SET email_status = 'unknown' WHERE contact_id IN "
            "(SELECT id FROM contacts WHERE status = 'active' AND email IS NOT NULL)"
        )
    )
    bind.execute(sa.text("UPDATE search_state SET generation = generation + 1 WHERE id = 1"))


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for name in ("search_changes_au", "search_changes_ad", "contacts_email_changed"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    else:
        op.execute("DROP TRIGGER IF EXISTS contacts_email_changed ON contacts")
        op.execute("DROP FUNCTION IF EXISTS vpx_email_changed()")
    for statement in _search_triggers(dialect, with_email=False):
        op.execute(statement)
    op.execute("DELETE FROM search_postings WHERE term LIKE '#em:%'")
    op.execute("UPDATE search_state SET generation = generation + 1 WHERE id = 1")
    # ALTER TABLE … DROP COLUMN in place on both (a batch copy of contacts would drop its triggers).
    op.execute("ALTER TABLE search_changes DROP COLUMN email_status")
    op.drop_index(op.f("ix_email_domains_expires_at"), table_name="email_domains")
    op.drop_table("email_domains")
    for name in ("ix_contacts_email_waiting", "ix_contacts_email_domain", "ix_contacts_email_unchecked"):
        op.drop_index(name, table_name="contacts")
    for column in ("email_domain", "email_checked_at", "email_flags", "email_status"):
        op.execute(f"ALTER TABLE contacts DROP COLUMN {column}")
