"""Reading an account's suppression notices: the API's feed (newest first, opaque cursor), the
dashboard's count and its CSV."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.cursors import decode_cursor, encode_cursor
from vpx.db import Database
from vpx.exports.csvstream import cell, neutralised
from vpx.ids import public_number_id
from vpx.models import Contact, SuppressionNotice
from vpx.suppression.schemas import SuppressedContact, SuppressionFeed

CURSOR_KIND = "sn"
CSV_COLUMNS = ("contact_id", "business_name", "reason", "suppressed_at")
CSV_BATCH = 1000


async def feed_page(session: AsyncSession, *, account_id: str, limit: int, cursor: str | None) -> SuppressionFeed:
    """One page, newest first. The cursor holds the last notice shown; the next page continues below
    it, so notices written between pages (higher ids, in commit order) neither repeat nor shift one."""
    statement = select(SuppressionNotice).where(SuppressionNotice.account_id == account_id)
    if cursor is not None:
        statement = statement.where(SuppressionNotice.id < decode_cursor(cursor, CURSOR_KIND))
    rows = list(await session.scalars(statement.order_by(SuppressionNotice.id.desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return SuppressionFeed(
        suppressions=[
            SuppressedContact(
                contact_id=public_number_id("ct", row.contact_id),
                reason=row.reason,  # written from the vocabulary only (reasons.ReasonClass)
                suppressed_at=row.suppressed_at,
            )
            for row in rows
        ],
        limit=limit,
        next_cursor=encode_cursor(CURSOR_KIND, rows[-1].id) if more and rows else None,
    )


async def suppressed_count(session: AsyncSession, *, account_id: str) -> int:
    """How many contacts the account revealed were suppressed since."""
    found = await session.scalar(
        select(func.count()).select_from(SuppressionNotice).where(SuppressionNotice.account_id == account_id)
    )
    return int(found or 0)


async def csv_batches(database: Database, *, account_id: str) -> AsyncIterator[list[list[str]]]:
    """CSV rows of the account's suppressed contacts, newest first, one batch (and one short read) at
    a time."""
    before: int | None = None
    while True:
        async with database.read_sessions() as session:
            statement = (
                select(
                    SuppressionNotice.id,
                    SuppressionNotice.contact_id,
                    Contact.business_name,
                    SuppressionNotice.reason,
                    SuppressionNotice.suppressed_at,
                )
                .join(Contact, Contact.id == SuppressionNotice.contact_id)
                .where(SuppressionNotice.account_id == account_id)
            )
            if before is not None:
                statement = statement.where(SuppressionNotice.id < before)
            rows = (await session.execute(statement.order_by(SuppressionNotice.id.desc()).limit(CSV_BATCH))).all()
        if rows:
            yield [_csv_row(contact_id, name, reason, at) for _, contact_id, name, reason, at in rows]
        if len(rows) < CSV_BATCH:
            return
        before = rows[-1][0]


def _csv_row(contact_id: int, business_name: str, reason: str, suppressed_at: datetime) -> list[str]:
    return [public_number_id("ct", contact_id), neutralised(business_name or ""), reason, cell(suppressed_at)]
