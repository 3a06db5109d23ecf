"""refund safeguards: what each reveal was paid from and what it sold, the values found bad kept off
later sales, and the network a report came from

- ``reveals.free_spent``: the part of the price paid with free credits (a refund goes back to the pool
  it came from); ``reveals.fields_sold``: the fields the reveal sold, as bits (phone 1, email 2,
  website 4, address 8; null for reveals made before, which sold every field the contact had);
- ``contacts.bad_fields``: the same bits for the contact's current values found bad, which later
  reveals neither show nor charge for; a trigger clears a field's bit when its value changes
  (whatever path wrote it), and the values already found bad are written in here;
- ``contact_reports.network_key``: a keyed hash of the network the report came from, so that reports
  from one network do not count as two buyers;
- ``data_refunds.withheld`` and ``withheld_reason``: the part of a field's share not given back (the
  monthly limit of refunds reached, or free credits of a month gone by), and why;
- ``sequence_bounces.corroborated_at``: when something besides the bouncing account's own mail server
  agreed (a bounce reviewed before that is looked at again when the MX check finds the domain dead).

Revision ID: 20261202_refund_safeguards
Revises: 20261201_data_refunds
Create Date: 2026-12-02
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261202_refund_safeguards"
down_revision: str | Sequence[str] | None = "20261201_data_refunds"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BITS = {"phone": 1, "email": 2, "website": 4, "address": 8}
ADDRESS = ("street", "city", "state", "postal_code")
WATCHED = ("phone", "email", "website", *ADDRESS)


def _changed(old: str, new: str, column: str, distinct: str) -> str:
    return f"{old}.{column} {distinct} {new}.{column}"


def _cleared(old: str, new: str, distinct: str) -> str:
    """The bits of the fields whose value this update changed."""
    parts = [
        f"(CASE WHEN {_changed(old, new, name, distinct)} THEN {BITS[name]} ELSE 0 END)"
        for name in ("phone", "email", "website")
    ]
    address = " OR ".join(_changed(old, new, name, distinct) for name in ADDRESS)
    parts.append(f"(CASE WHEN {address} THEN {BITS['address']} ELSE 0 END)")
    return " | ".join(parts)


SQLITE_TRIGGER = f"""CREATE TRIGGER contacts_bad_fields_cleared AFTER UPDATE OF {", ".join(WATCHED)} ON contacts
    WHEN new.bad_fields != 0 AND ({" OR ".join(_changed("old", "new", name, "IS NOT") for name in WATCHED)}) BEGIN
        UPDATE contacts SET bad_fields = bad_fields & ~({_cleared("old", "new", "IS NOT")}) WHERE id = new.id;
    END"""
POSTGRES_TRIGGER = (
    f"""CREATE FUNCTION vpx_bad_fields_cleared() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.bad_fields <> 0 THEN
            NEW.bad_fields := NEW.bad_fields & ~({_cleared("OLD", "NEW", "IS DISTINCT FROM")});
        END IF;
        RETURN NEW;
    END $$""",
    f"CREATE TRIGGER contacts_bad_fields_cleared BEFORE UPDATE OF {', '.join(WATCHED)} ON contacts "
    "FOR EACH ROW EXECUTE FUNCTION vpx_bad_fields_cleared()",
)


def _value_key(value: str) -> str:
    # vpx.quality.fields.value_key, as it was when this was written.
    return hashlib.sha256(value.strip().casefold().encode()).hexdigest()


def _current_values(row: sa.Row[tuple[object, ...]]) -> dict[str, str | None]:
    address = None
    if row.street:
        address = f"{row.street}, {row.city}, {row.state} {row.postal_code or ''}".strip()
    return {"phone": row.phone or None, "email": row.email or None, "website": row.website or None, "address": address}


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    # Columns added in place (a batch copy of contacts would drop its triggers).
    op.add_column("reveals", sa.Column("free_spent", sa.BigInteger(), server_default="0", nullable=False))
    op.add_column("reveals", sa.Column("fields_sold", sa.SmallInteger(), nullable=True))
    op.add_column("contacts", sa.Column("bad_fields", sa.SmallInteger(), server_default="0", nullable=False))
    op.add_column("contact_reports", sa.Column("network_key", sa.String(length=64), nullable=True))
    op.add_column("data_refunds", sa.Column("withheld", sa.BigInteger(), server_default="0", nullable=False))
    op.add_column("data_refunds", sa.Column("withheld_reason", sa.String(length=32), nullable=True))
    op.add_column("sequence_bounces", sa.Column("corroborated_at", sa.DateTime(timezone=True), nullable=True))
    # Bounces reviewed before this rule were believed at once.
    op.execute("UPDATE sequence_bounces SET corroborated_at = reviewed_at WHERE reviewed_at IS NOT NULL")
    if dialect == "sqlite":
        op.execute(SQLITE_TRIGGER)
    else:
        for statement in POSTGRES_TRIGGER:
            op.execute(statement)
    _bits_of_values_found_bad()


def _bits_of_values_found_bad() -> None:
    bind = op.get_bind()
    marks = bind.execute(
        sa.text(
            "SELECT b.contact_id, b.field, b.value_key, c.phone, c.email, c.website, c.street, c.city, c.state, "
            "c.postal_code FROM bad_fields b JOIN contacts c ON c.id = b.contact_id"
        )
    ).all()
    bits: dict[int, int] = {}
    for mark in marks:
        value = _current_values(mark).get(mark.field)
        if value is not None and _value_key(value) == mark.value_key:
            bits[mark.contact_id] = bits.get(mark.contact_id, 0) | BITS[mark.field]
    for contact_id, found in bits.items():
        bind.execute(
            sa.text("UPDATE contacts SET bad_fields = :bits WHERE id = :id"), {"bits": found, "id": contact_id}
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS contacts_bad_fields_cleared")
    else:
        op.execute("DROP TRIGGER IF EXISTS contacts_bad_fields_cleared ON contacts")
        op.execute("DROP FUNCTION IF EXISTS vpx_bad_fields_cleared()")
    for table, column in (
        ("sequence_bounces", "corroborated_at"),
        ("data_refunds", "withheld_reason"),
        ("data_refunds", "withheld"),
        ("contact_reports", "network_key"),
        ("contacts", "bad_fields"),
        ("reveals", "fields_sold"),
        ("reveals", "free_spent"),
    ):
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
