"""enrichment messages: provider error text kept in batch results is cut back to the fixed reason

A provider's error body was once quoted after the reason ("Hunter answered HTTP 400: …"), cut to 200
characters before the key was masked, so a stored batch result could hold a piece of the customer's
key. Each stored attempt's message keeps only its fixed part ("Hunter answered HTTP 400"), as new
attempts are written. Running it twice changes nothing.

Revision ID: 20261129_enrichment_messages
Revises: 20261129_contributed_sources
Create Date: 2026-11-29
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "20261129_enrichment_messages"
down_revision: str | Sequence[str] | None = "20261129_contributed_sources"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHUNK = 500
# "<reason> (HTTP 401): <body>" and "<title> answered HTTP 400: <body>": the body goes.
QUOTED = re.compile(r"^(.*?(?:\(HTTP \d{3}\)|answered HTTP \d{3})): .*\Z", re.DOTALL)
ITEMS = sa.table("enrichment_batch_items", sa.column("id", sa.BigInteger), sa.column("result", sa.JSON))


def cleaned(result: Any) -> Any | None:
    """The result with every quoting message cut back, or None when nothing in it quotes a provider."""
    if not isinstance(result, dict) or not isinstance(result.get("attempts"), list):
        return None
    changed = False
    attempts = []
    for attempt in result["attempts"]:
        error = attempt.get("error") if isinstance(attempt, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            found = QUOTED.match(error["message"])
            if found is not None:
                attempt = {**attempt, "error": {**error, "message": found.group(1)}}
                changed = True
        attempts.append(attempt)
    return {**result, "attempts": attempts} if changed else None


def scrub(connection: sa.Connection) -> int:
    """Rewrites the stored results that quote a provider; returns how many changed."""
    changed = 0
    last = 0
    while True:
        rows = connection.execute(
            sa.select(ITEMS.c.id, ITEMS.c.result)
            .where(ITEMS.c.id > last, sa.cast(ITEMS.c.result, sa.Text).like("%HTTP %"))
            .order_by(ITEMS.c.id)
            .limit(CHUNK)
        ).all()
        if not rows:
            return changed
        for row_id, result in rows:
            new = cleaned(result)
            if new is not None:
                connection.execute(sa.update(ITEMS).where(ITEMS.c.id == row_id).values(result=new))
                changed += 1
        last = rows[-1][0]


def upgrade() -> None:
    scrub(op.get_bind())


def downgrade() -> None:
    """Nothing to undo: the text that was cut is not kept."""
