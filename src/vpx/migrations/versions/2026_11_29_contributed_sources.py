"""contributed sources: a contributed contact's record id no longer carries the publisher's account id

A contribution's source row was recorded as ("contributed", "<publisher account id>_<20 random
characters>"), and a buyer who revealed the contact saw the publisher's account in ``sources``. The
random part stays (it is what made the id unique); the account becomes ``ctb``, as new contributions
are recorded. Rows already in that form, and every other registry's, are left as they are, so the
statement may run twice.

Revision ID: 20261129_contributed_sources
Revises: 20261126_worker_heartbeats
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "20261129_contributed_sources"
down_revision: str | Sequence[str] | None = "20261126_worker_heartbeats"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The last 20 characters are the random part of the old form; the same SQL on SQLite and PostgreSQL.
REWRITE = """
UPDATE contact_sources
SET record_id = 'ctb_' || substr(record_id, length(record_id) - 19, 20)
WHERE registry = 'contributed' AND record_id NOT LIKE 'ctb!_%' ESCAPE '!' AND length(record_id) > 24
"""


def upgrade() -> None:
    op.execute(REWRITE)


def downgrade() -> None:
    """Nothing to undo: the account each row named is not kept, and the new form is valid before too."""
