"""search postings: each term's contacts as Roaring bitmaps, kept in step by a change log

``search_postings`` holds, for each term a contact is found by (a word of a field, a filter value),
the ids of the active contacts that have it, one row per chunk of 2**18 ids; ``search_changes`` is
written by triggers on ``contacts`` for every insert, delete and change of a searched field or of the
status, with the fields as they were; ``search_state.generation`` advances whenever the postings do.
See vpx.contacts.search.postings. The postings of the contacts already in the catalogue are built
here, in one pass (about a minute per million contacts).

Revision ID: 20261128_search_postings
Revises: 20261127_password_resets
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from vpx.contacts.search.postings import CHUNK_BITS, build_chunks, posting_rows

revision: str = "20261128_search_postings"
down_revision: str | Sequence[str] | None = "20261127_password_resets"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SEARCHED = ("business_name", "specialty", "license_type", "industry", "city", "state")
_OLD = ", ".join(f"old.{name}" for name in SEARCHED)
_CHANGED_SQLITE = " OR ".join(f"old.{name} IS NOT new.{name}" for name in (*SEARCHED, "status"))
_CHANGED_POSTGRES = " OR ".join(f"OLD.{name} IS DISTINCT FROM NEW.{name}" for name in (*SEARCHED, "status"))
_COLUMNS = f"contact_id, was_active, {', '.join(SEARCHED)}"

SQLITE_TRIGGERS = (
    """CREATE TRIGGER search_changes_ai AFTER INSERT ON contacts BEGIN
        INSERT INTO search_changes (contact_id, was_active) VALUES (new.id, 0);
    END""",
    f"""CREATE TRIGGER search_changes_au AFTER UPDATE OF {", ".join(SEARCHED)}, status ON contacts
    WHEN {_CHANGED_SQLITE} BEGIN
        INSERT INTO search_changes ({_COLUMNS}) VALUES (old.id, old.status = 'active', {_OLD});
    END""",
    f"""CREATE TRIGGER search_changes_ad AFTER DELETE ON contacts BEGIN
        INSERT INTO search_changes ({_COLUMNS}) VALUES (old.id, old.status = 'active', {_OLD});
    END""",
)
POSTGRES_TRIGGERS = (
    f"""CREATE FUNCTION vpx_search_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            INSERT INTO search_changes (contact_id, was_active) VALUES (NEW.id, false);
        ELSIF TG_OP = 'DELETE' OR ({_CHANGED_POSTGRES}) THEN
            INSERT INTO search_changes ({_COLUMNS})
            VALUES (OLD.id, OLD.status = 'active', {_OLD.replace("old.", "OLD.")});
        END IF;
        RETURN NULL;
    END $$""",
    "CREATE TRIGGER search_changes AFTER INSERT OR UPDATE OR DELETE ON contacts "
    "FOR EACH ROW EXECUTE FUNCTION vpx_search_change()",
)


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    term = sa.String(length=200) if dialect == "sqlite" else sa.String(length=200, collation="C")
    op.create_table(
        "search_postings",
        sa.Column("term", term, nullable=False),
        sa.Column("chunk", sa.Integer(), nullable=False),
        sa.Column("ids", sa.LargeBinary(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("term", "chunk", name=op.f("pk_search_postings")),
        sqlite_with_rowid=False,
    )
    if dialect == "postgresql":
        # Bitmaps barely compress: stored out of line as they are, not tried with pglz first.
        op.execute("ALTER TABLE search_postings ALTER COLUMN ids SET STORAGE EXTERNAL")
    op.create_table(
        "search_changes",
        sa.Column("seq", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("contact_id", sa.BigInteger(), nullable=False),
        sa.Column("was_active", sa.Boolean(), nullable=False),
        sa.Column("business_name", sa.String(length=300), nullable=True),
        sa.Column("specialty", sa.String(length=200), nullable=True),
        sa.Column("license_type", sa.String(length=120), nullable=True),
        sa.Column("industry", sa.String(length=40), nullable=True),
        sa.Column("city", sa.String(length=120), nullable=True),
        sa.Column("state", sa.String(length=2), nullable=True),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_search_changes")),
    )
    op.create_index(op.f("ix_search_changes_contact_id"), "search_changes", ["contact_id"])
    op.create_table(
        "search_state",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("generation", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_search_state")),
    )
    op.execute("INSERT INTO search_state (id, generation) VALUES (1, 1)")
    for statement in SQLITE_TRIGGERS if dialect == "sqlite" else POSTGRES_TRIGGERS:
        op.execute(statement)
    _build_postings()


def _build_postings() -> None:
    """The postings of the contacts already there, read a chunk of ids at a time."""
    bind = op.get_bind()
    highest = bind.execute(sa.text("SELECT max(id) FROM contacts")).scalar()
    if highest is None:
        return
    insert = sa.text("INSERT INTO search_postings (term, chunk, ids, size) VALUES (:term, :chunk, :ids, :size)")
    select = sa.text(
        "SELECT id, business_name, specialty, license_type, industry, city, state, status FROM contacts "
        "WHERE id >= :low AND id < :high ORDER BY id"
    )
    step = 1 << CHUNK_BITS
    for low in range(0, int(highest) + 1, step):
        rows = bind.execute(select, {"low": low, "high": low + step}).all()
        for chunk, bitmaps in build_chunks(rows):
            values = posting_rows(chunk, bitmaps)
            for start in range(0, len(values), 10_000):
                bind.execute(insert, values[start : start + 10_000])


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for name in ("search_changes_ai", "search_changes_au", "search_changes_ad"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    else:
        op.execute("DROP TRIGGER IF EXISTS search_changes ON contacts")
        op.execute("DROP FUNCTION IF EXISTS vpx_search_change()")
    op.drop_table("search_state")
    op.drop_index(op.f("ix_search_changes_contact_id"), table_name="search_changes")
    op.drop_table("search_changes")
    op.drop_table("search_postings")
