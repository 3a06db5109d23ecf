"""suppressed contacts leave search: each contact knows whether an entry of the suppression list covers
it, and search treats a covered contact as it treats an inactive one

- ``contacts.suppressed``: true when an entry covers the contact (by its id, its phone or its email),
  set for the contacts already covered; kept by a trigger when a contact is added or its phone or
  email changes (whatever path writes it: imports, contributions, merges), and by the suppression
  service when an entry is added;
- the search change log's triggers (20261201_email_deliverability's) follow ``suppressed`` too and
  record a covered contact as inactive, and the postings of the contacts covered now lose them.

Revision ID: 20261202_suppressed_contacts
Revises: 20261202_refund_safeguards
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pyroaring import BitMap

revision: str = "20261202_suppressed_contacts"
down_revision: str | Sequence[str] | None = "20261202_refund_safeguards"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHUNK_BITS = 18  # vpx.contacts.search.postings.CHUNK_BITS, as it was when this was written
SEARCHED = ("business_name", "specialty", "license_type", "industry", "city", "state")


def _covering(row: str) -> str:
    """An entry that covers the contact ``row`` (new / NEW / an alias), as the reveal's check matches
    them (SQL's lower() folds ASCII letters only; so do the addresses businesses publish)."""
    return (
        "EXISTS (SELECT 1 FROM suppressions s WHERE "
        f"(s.kind = 'contact' AND s.value = 'ct_' || {row}.id) "
        f"OR (s.kind = 'phone' AND s.value = {row}.phone) "
        f"OR (s.kind = 'email' AND s.value = lower({row}.email)))"
    )


def _search_triggers(dialect: str, *, with_suppressed: bool) -> tuple[str, ...]:
    """The search change log's update and delete triggers, following ``suppressed`` when asked."""
    columns = f"contact_id, was_active, {', '.join(SEARCHED)}, email_status"
    if dialect == "sqlite":
        active = "old.status = 'active'" + (" AND NOT old.suppressed" if with_suppressed else "")
        old = ", ".join(f"old.{name}" for name in SEARCHED)
        old += ", CASE WHEN old.email IS NULL THEN NULL ELSE old.email_status END"
        changed = " OR ".join(f"old.{name} IS NOT new.{name}" for name in (*SEARCHED, "status"))
        changed += " OR (old.email IS NULL) IS NOT (new.email IS NULL) OR old.email_status IS NOT new.email_status"
        watched = ", ".join((*SEARCHED, "status", "email", "email_status"))
        if with_suppressed:
            changed += " OR old.suppressed IS NOT new.suppressed"
            watched += ", suppressed"
        return (
            f"""CREATE TRIGGER search_changes_au AFTER UPDATE OF {watched} ON contacts
            WHEN {changed} BEGIN
                INSERT INTO search_changes ({columns}) VALUES (old.id, {active}, {old});
            END""",
            f"""CREATE TRIGGER search_changes_ad AFTER DELETE ON contacts BEGIN
                INSERT INTO search_changes ({columns}) VALUES (old.id, {active}, {old});
            END""",
        )
    active = "OLD.status = 'active'" + (" AND NOT OLD.suppressed" if with_suppressed else "")
    old = ", ".join(f"OLD.{name}" for name in SEARCHED)
    old += ", CASE WHEN OLD.email IS NULL THEN NULL ELSE OLD.email_status END"
    changed = " OR ".join(f"OLD.{name} IS DISTINCT FROM NEW.{name}" for name in (*SEARCHED, "status"))
    changed += (
        " OR (OLD.email IS NULL) IS DISTINCT FROM (NEW.email IS NULL)"
        " OR OLD.email_status IS DISTINCT FROM NEW.email_status"
    )
    if with_suppressed:
        changed += " OR OLD.suppressed IS DISTINCT FROM NEW.suppressed"
    return (
        f"""CREATE OR REPLACE FUNCTION vpx_search_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'INSERT' THEN
                INSERT INTO search_changes (contact_id, was_active) VALUES (NEW.id, false);
            ELSIF TG_OP = 'DELETE' OR ({changed}) THEN
                INSERT INTO search_changes ({columns}) VALUES (OLD.id, {active}, {old});
            END IF;
            RETURN NULL;
        END $$""",
    )


SQLITE_COVERED = (
    f"""CREATE TRIGGER contacts_suppressed_ai AFTER INSERT ON contacts
    WHEN {_covering("new")} BEGIN
        UPDATE contacts SET suppressed = 1 WHERE id = new.id;
    END""",
    f"""CREATE TRIGGER contacts_suppressed_au AFTER UPDATE OF phone, email ON contacts
    WHEN old.phone IS NOT new.phone OR old.email IS NOT new.email BEGIN
        UPDATE contacts SET suppressed = {_covering("new")} WHERE id = new.id;
    END""",
)
POSTGRES_COVERED = (
    f"""CREATE FUNCTION vpx_contact_suppressed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' OR NEW.phone IS DISTINCT FROM OLD.phone OR NEW.email IS DISTINCT FROM OLD.email THEN
            NEW.suppressed := {_covering("NEW")};
        END IF;
        RETURN NEW;
    END $$""",
    "CREATE TRIGGER contacts_suppressed BEFORE INSERT OR UPDATE OF phone, email ON contacts "
    "FOR EACH ROW EXECUTE FUNCTION vpx_contact_suppressed()",
)


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    false = "0" if dialect == "sqlite" else "false"
    op.add_column("contacts", sa.Column("suppressed", sa.Boolean(), server_default=sa.text(false), nullable=False))
    if dialect == "sqlite":
        for name in ("search_changes_au", "search_changes_ad"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        for statement in SQLITE_COVERED:
            op.execute(statement)
    else:
        for statement in POSTGRES_COVERED:
            op.execute(statement)
    for statement in _search_triggers(dialect, with_suppressed=True):
        op.execute(statement)
    _mark_covered(dialect)


def _mark_covered(dialect: str) -> None:
    """The contacts covered now: marked, and taken out of every posting. Their pending changes, if
    any, are folded later as usual (the covered contact then has no terms)."""
    bind = op.get_bind()
    covered = [int(row[0]) for row in bind.execute(sa.text(f"SELECT c.id FROM contacts c WHERE {_covering('c')}"))]
    if not covered:
        return
    true = "1" if dialect == "sqlite" else "true"
    for start in range(0, len(covered), 1_000):
        part = covered[start : start + 1_000]
        marks = ", ".join(str(i) for i in part)
        bind.execute(sa.text(f"UPDATE contacts SET suppressed = {true} WHERE id IN ({marks})"))
    # The update logged search changes for them; folding those removes them from the postings, but
    # until then searches would apply them only within their limit: remove them here, and the log's
    # entries then change nothing when folded.
    by_chunk: dict[int, BitMap] = {}
    for contact_id in covered:
        by_chunk.setdefault(contact_id >> CHUNK_BITS, BitMap()).add(contact_id)
    for chunk, ids in by_chunk.items():
        rows = bind.execute(
            sa.text("SELECT term, ids FROM search_postings WHERE chunk = :chunk"), {"chunk": chunk}
        ).all()
        for term, blob in rows:
            bitmap = BitMap.deserialize(bytes(blob))
            if not bitmap & ids:
                continue
            bitmap -= ids
            if bitmap:
                bitmap.run_optimize()
                bind.execute(
                    sa.text(
                        "UPDATE search_postings SET ids = :ids, size = :size WHERE term = :term AND chunk = :chunk"
                    ),
                    {"ids": bytes(bitmap.serialize()), "size": len(bitmap), "term": term, "chunk": chunk},
                )
            else:
                bind.execute(
                    sa.text("DELETE FROM search_postings WHERE term = :term AND chunk = :chunk"),
                    {"term": term, "chunk": chunk},
                )
    bind.execute(sa.text("UPDATE search_state SET generation = generation + 1 WHERE id = 1"))


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for name in ("search_changes_au", "search_changes_ad", "contacts_suppressed_ai", "contacts_suppressed_au"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    else:
        op.execute("DROP TRIGGER IF EXISTS contacts_suppressed ON contacts")
        op.execute("DROP FUNCTION IF EXISTS vpx_contact_suppressed()")
    for statement in _search_triggers(dialect, with_suppressed=False):
        op.execute(statement)
    # Covered contacts come back into search: rebuilt from the table, as the postings' migration did.
    covered = [int(row[0]) for row in op.get_bind().execute(sa.text("SELECT id FROM contacts WHERE suppressed"))]
    if covered:
        op.execute(
            "INSERT INTO search_changes (contact_id, was_active) SELECT id, "
            + ("0" if dialect == "sqlite" else "false")
            + " FROM contacts WHERE suppressed"
        )
    op.execute("ALTER TABLE contacts DROP COLUMN suppressed")
