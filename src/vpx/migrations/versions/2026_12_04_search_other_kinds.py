"""search: one term for the businesses of another kind than the trade their specialty names

``#other`` (vpx.contacts.search.terms.OTHER_KIND) holds the active contacts whose specialty has one
of the words of a supplier, a utility, software or staffing (OTHER_KINDS): every question with words
reads it to rank them after the trade's own businesses, one bitmap where it read nine. Its postings
are the union of those words' specialty postings, chunk by chunk, made here; changes waiting to be
folded are folded with the new term by the code that reads them.

Revision ID: 20261204_search_other_kinds
Revises: 20261203_compliance_batches
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pyroaring import BitMap

revision: str = "20261204_search_other_kinds"
down_revision: str | Sequence[str] | None = "20261203_compliance_batches"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TERM = "#other"
# vpx.contacts.search.terms.OTHER_KINDS as it was when this was written.
WORDS = ("supply", "supplies", "supplier", "wholesale", "utility", "utilities", "software", "staffing", "distribution")


def upgrade() -> None:
    bind = op.get_bind()
    chunks: dict[int, BitMap] = defaultdict(BitMap)
    placeholders = ", ".join(f":w{i}" for i in range(len(WORDS)))
    rows = bind.execute(
        sa.text(f"SELECT chunk, ids FROM search_postings WHERE term IN ({placeholders})"),
        {f"w{i}": "s:" + word for i, word in enumerate(WORDS)},
    )
    for chunk, blob in rows:
        chunks[int(chunk)] |= BitMap.deserialize(bytes(blob))
    bind.execute(sa.text("DELETE FROM search_postings WHERE term = :term"), {"term": TERM})
    insert = sa.text("INSERT INTO search_postings (term, chunk, ids, size) VALUES (:term, :chunk, :ids, :size)")
    for chunk, bitmap in sorted(chunks.items()):
        if bitmap:
            bitmap.run_optimize()
            bind.execute(insert, {"term": TERM, "chunk": chunk, "ids": bytes(bitmap.serialize()), "size": len(bitmap)})
    # Every process's remembered bitmaps and answers are of an older generation now.
    bind.execute(sa.text("UPDATE search_state SET generation = generation + 1 WHERE id = 1"))


def downgrade() -> None:
    op.get_bind().execute(sa.text("DELETE FROM search_postings WHERE term = :term"), {"term": TERM})
    op.get_bind().execute(sa.text("UPDATE search_state SET generation = generation + 1 WHERE id = 1"))
