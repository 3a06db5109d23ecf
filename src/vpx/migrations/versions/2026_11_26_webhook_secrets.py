"""webhook signing secrets sealed at rest (D25, D29), like provider keys and mailbox passwords:
webhook_endpoints.secret / previous_secret, webhook_deliveries.secret and batch_reveals.webhook_secret
become *_sealed (TEXT: a sealed whsec_ secret is about 164 characters), their rows sealed; stored
idempotent responses that hold a secret are sealed whole

Revision ID: 20261126_webhook_secrets
Revises: 20261126_visitors
Create Date: 2026-11-26 21:00:00
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sqlalchemy as sa
from alembic import op

from vpx.secrets import SecretBox

revision: str = "20261126_webhook_secrets"
down_revision: str | Sequence[str] | None = "20261126_visitors"
branch_labels: str | Sequence[str] | None = None
# The webhook tables are on a branch of their own: they must be there first.
depends_on: str | Sequence[str] | None = "20261122_webhooks"

# (table, key column, plain column, sealed column, nullable)
COLUMNS = [
    ("webhook_endpoints", "id", "secret", "secret_sealed", False),
    ("webhook_endpoints", "id", "previous_secret", "previous_secret_sealed", True),
    ("webhook_deliveries", "id", "secret", "secret_sealed", True),
    ("batch_reveals", "id", "webhook_secret", "webhook_secret_sealed", True),
]
PLAIN_PREFIX = "whsec_"
# Every Fernet token starts so: version byte 0x80, then a timestamp whose top bytes are zero until 2106.
SEALED_PREFIX = "gAAAAA"
BATCH = 500


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


def _rename(
    table: str,
    old: str,
    new: str,
    *,
    to_type: sa.types.TypeEngine[str],
    from_type: sa.types.TypeEngine[str],
    nullable: bool,
) -> None:
    if op.get_bind().dialect.name == "sqlite":
        # RENAME COLUMN in place (SQLite's batch mode would rebuild the outbox). SQLite enforces no
        # VARCHAR length, so the declared type may stay as it is.
        op.alter_column(table, old, new_column_name=new)
    else:
        op.alter_column(
            table, old, new_column_name=new, type_=to_type, existing_type=from_type, existing_nullable=nullable
        )


def _convert(table: str, key: str, column: str, *, needs: Callable[[str], bool], change: Callable[[str], str]) -> None:
    """Rewrites, batch by batch in key order, every value of the column that ``needs`` changing."""
    bind = op.get_bind()
    last: object = None
    while True:
        after = f" AND {key} > :last" if last is not None else ""
        rows = bind.execute(
            sa.text(
                f"SELECT {key}, {column} FROM {table} WHERE {column} IS NOT NULL{after} ORDER BY {key} LIMIT {BATCH}"
            ),
            {"last": last},
        ).all()
        updates = [{"k": k, "v": change(v)} for k, v in rows if needs(v)]
        if updates:
            bind.execute(sa.text(f"UPDATE {table} SET {column} = :v WHERE {key} = :k"), updates)
        if len(rows) < BATCH:
            return
        last = rows[-1][0]


def _secure_delete() -> None:
    # On SQLite, space freed by the rewritten rows is zeroed rather than left holding the plain values.
    if op.get_bind().dialect.name == "sqlite":
        op.execute("PRAGMA secure_delete = ON")


def upgrade() -> None:
    box = _LazyBox()
    _secure_delete()
    for table, key, plain, sealed, nullable in COLUMNS:
        _rename(table, plain, sealed, to_type=sa.Text(), from_type=sa.String(length=100), nullable=nullable)
        # Only plain secrets are sealed: a row sealed already (a second run) is left alone.
        _convert(table, key, sealed, needs=lambda v: v.startswith(PLAIN_PREFIX), change=lambda v: box().seal(v))
    # A replayable response that shows a secret (a webhook's creation, a batch's 202) is kept sealed whole.
    _convert(
        "idempotency_records",
        "id",
        "response_body",
        needs=lambda v: PLAIN_PREFIX in v and not v.startswith(SEALED_PREFIX),
        change=lambda v: box().seal(v),
    )


def downgrade() -> None:
    box = _LazyBox()
    _convert(
        "idempotency_records",
        "id",
        "response_body",
        needs=lambda v: v.startswith(SEALED_PREFIX),
        change=lambda v: box().open(v),
    )
    for table, key, plain, sealed, nullable in reversed(COLUMNS):
        _convert(table, key, sealed, needs=lambda v: not v.startswith(PLAIN_PREFIX), change=lambda v: box().open(v))
        _rename(table, sealed, plain, to_type=sa.String(length=100), from_type=sa.Text(), nullable=nullable)
