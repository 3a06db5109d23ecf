"""unsubscribe digests: an enrollment's unsubscribe token is no longer kept in clear

enrollments.unsubscribe_token (the token of every link the recipient's emails carry, looked up by
equality) becomes unsubscribe_digest, its SHA-256 (hex), which the link's token is looked up by, as
password reset tokens are; and unsubscribe_token_sealed (TEXT), the token sealed with the service's
keys, from which the worker writes the link into the enrollment's later emails. Every row is
converted: the links already sent keep working, and later emails carry the same link. Running the
conversion again changes nothing (a row already sealed is left alone).

Revision ID: 20261129_unsubscribe_digests
Revises: 20261126_worker_heartbeats
Create Date: 2026-11-29
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import sqlalchemy as sa
from alembic import op

from vpx.secrets import SecretBox

revision: str = "20261129_unsubscribe_digests"
down_revision: str | Sequence[str] | None = "20261126_worker_heartbeats"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 500
ENROLLMENTS = sa.table(
    "enrollments",
    sa.column("id", sa.String),
    sa.column("unsubscribe_digest", sa.String),
    sa.column("unsubscribe_token_sealed", sa.Text),
)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class _LazyBox:
    """The service's box, loaded only when a row needs it: an empty database migrates without keys
    (and without generating a key file)."""

    def __init__(self) -> None:
        self._box: SecretBox | None = None

    def __call__(self) -> SecretBox:
        if self._box is None:
            from vpx.config import get_settings
            from vpx.secrets import load_box

            # `vpx.migrations.upgrade(settings)` hands its settings over; plain `alembic` reads VPX_*.
            config = op.get_context().config
            settings = config.attributes.get("settings") if config is not None else None
            self._box = load_box(settings or get_settings())
        return self._box


def convert(connection: sa.Connection, box: Callable[[], SecretBox]) -> int:
    """Every row whose digest column still holds the token in clear (no sealed copy yet): the digest
    and the sealed token written. Returns how many rows changed."""
    table = ENROLLMENTS
    changed, last = 0, None
    while True:
        query = (
            sa.select(table.c.id, table.c.unsubscribe_digest)
            .where(table.c.unsubscribe_token_sealed.is_(None))
            .order_by(table.c.id)
            .limit(BATCH)
        )
        if last is not None:
            query = query.where(table.c.id > last)
        rows = connection.execute(query).all()
        for key, token in rows:
            connection.execute(
                table.update()
                .where(table.c.id == key)
                .values(unsubscribe_digest=digest(token), unsubscribe_token_sealed=box().seal(token))
            )
        changed += len(rows)
        if len(rows) < BATCH:
            return changed
        last = rows[-1][0]


def _rename(old: str, new: str) -> None:
    if op.get_bind().dialect.name == "sqlite":
        # RENAME COLUMN in place (no table rebuild); the unique constraint follows the column.
        op.alter_column("enrollments", old, new_column_name=new)
    else:
        op.alter_column(
            "enrollments", old, new_column_name=new, existing_type=sa.String(length=64), existing_nullable=False
        )
        op.execute(f"ALTER TABLE enrollments RENAME CONSTRAINT uq_enrollments_{old} TO uq_enrollments_{new}")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        # Space freed by the rewritten rows is zeroed rather than left holding the tokens.
        op.execute("PRAGMA secure_delete = ON")
    op.add_column("enrollments", sa.Column("unsubscribe_token_sealed", sa.Text(), nullable=True))
    _rename("unsubscribe_token", "unsubscribe_digest")
    convert(op.get_bind(), _LazyBox())


def downgrade() -> None:
    box = _LazyBox()
    table = ENROLLMENTS
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(table.c.id, table.c.unsubscribe_token_sealed).where(table.c.unsubscribe_token_sealed.is_not(None))
    ).all()
    for key, sealed in rows:
        bind.execute(table.update().where(table.c.id == key).values(unsubscribe_digest=box().open(sealed)))
    _rename("unsubscribe_digest", "unsubscribe_token")
    op.drop_column("enrollments", "unsubscribe_token_sealed")
