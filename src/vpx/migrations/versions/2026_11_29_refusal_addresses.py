"""refusal addresses: stored refusals of a host name no longer name the address it resolved to

The outbound-address guard once answered "host vm resolves to 127.0.0.1 is a loopback address" (and,
for mail hosts, "host vm: 10.0.0.5 is a private address"), and those words were kept where the account
can read them again: a webhook delivery's attempts, a paused mailbox's or sequence's reason, a held
message's last answer. Each becomes "host vm resolves to a non-public address", as the guard now says.
Running it twice changes nothing.

Revision ID: 20261129_refusal_addresses
Revises: 20261129_enrichment_messages
Create Date: 2026-11-29
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "20261129_refusal_addresses"
down_revision: str | Sequence[str] | None = "20261129_enrichment_messages"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHUNK = 500
# Every reason the guard gave for an address, after the host's name.
NAMED = re.compile(
    r"host (?P<host>\S+?)(?: resolves to|:) (?:\S+ is (?:a cloud metadata|a link-local|a loopback|not a unicast"
    r"|a private) address|'[^']*', not an address)"
)
NON_PUBLIC = r"host \g<host> resolves to a non-public address"
# (table, key column, text column)
COLUMNS = (
    ("webhook_attempts", "id", "error"),
    ("mailboxes", "id", "pause_reason"),
    ("sequences", "id", "pause_reason"),
    ("sequence_messages", "id", "last_reply"),
)


def cleaned(text: str) -> str:
    return NAMED.sub(NON_PUBLIC, text)


def scrub(connection: sa.Connection) -> int:
    """Rewrites every stored text that names a host's address; returns how many changed."""
    changed = 0
    for name, key_name, text_name in COLUMNS:
        table = sa.table(name, sa.column(key_name), sa.column(text_name, sa.Text))
        key, text = table.c[key_name], table.c[text_name]
        last: object = None
        while True:
            query = sa.select(key, text).where(text.like("%host %")).order_by(key).limit(CHUNK)
            if last is not None:
                query = query.where(key > last)
            rows = connection.execute(query).all()
            if not rows:
                break
            for row_key, value in rows:
                new = cleaned(value)
                if new != value:
                    connection.execute(sa.update(table).where(key == row_key).values({text_name: new}))
                    changed += 1
            last = rows[-1][0]
    return changed


def upgrade() -> None:
    scrub(op.get_bind())


def downgrade() -> None:
    """Nothing to undo: the addresses are not kept."""
