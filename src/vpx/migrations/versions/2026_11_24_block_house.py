"""block_house: entity resolution's block index also keyed by the contact's house number

``ix_contacts_block`` was (state, city_key, first word of the name): a block lookup fetched every
contact of the block and kept those whose street merely contained the record's house number. Blocks
grow with the catalogue (a common first word in a large city), and so did every batch's lookups: a
9,000,000-row import ran at half its 1,000,000-row rate. The index now ends with the house number
of the contact's street as entity resolution reads it (vpx.registries.resolution.house_expression),
so a lookup reads exactly the contacts at the record's house number, and those whose street may be
anywhere (none, or one that folding may change), however large the block.

The expressions below are this migration's own copies (a migration keeps meaning what it meant);
a test holds the live query to this index.

Revision ID: 20261124_block_house
Revises: 20261124_search_vector_input
Create Date: 2026-11-24 06:10:00
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from alembic import op

revision: str = "20261124_block_house"
down_revision: str | Sequence[str] | None = "20261124_search_vector_input"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BEFORE = " !\"$%&''()*+,-./:;<=>?@[\\]^_`{|}~"
_ALNUM = "0123456789abcdefghijklmnopqrstuvwxyz"


def house_expression(*, sqlite: bool) -> str:
    rest = f"ltrim(lower(street), '{_BEFORE}')"
    number = f"substr({rest}, 1, length({rest}) - length(ltrim({rest}, '{_ALNUM}')))"
    if sqlite:
        unknown = "street IS NULL OR street GLOB '*[^ -~]*' OR street NOT GLOB '*[A-Za-z0-9]*'"
        digit = f"instr('0123456789', substr({rest}, 1, 1)) > 0"
    else:
        unknown = "street IS NULL OR street ~ '[^ -~]' OR street !~ '[A-Za-z0-9]'"
        digit = f"strpos('0123456789', substr({rest}, 1, 1)) > 0"
    return f"(CASE WHEN {unknown} THEN '' WHEN {digit} THEN {number} ELSE '-' END)"


def _block(sqlite: bool) -> str:
    registries = importlib.import_module("vpx.migrations.versions.2026_11_22_registries")
    return str(registries.block_expression(sqlite=sqlite))


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    op.execute("DROP INDEX IF EXISTS ix_contacts_block")
    op.execute(
        f"CREATE INDEX ix_contacts_block ON contacts "
        f"(state, city_key, ({_block(sqlite)}), ({house_expression(sqlite=sqlite)}))"
    )


def downgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    op.execute("DROP INDEX IF EXISTS ix_contacts_block")
    op.execute(f"CREATE INDEX ix_contacts_block ON contacts (state, city_key, ({_block(sqlite)}))")
