"""Caps on what an account keeps (webhooks, sites, rules, sequences, mailboxes) hold under concurrency:
a creation counts what the account has and inserts in one transaction, after this lock."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.models import Account


async def count_in_turn(session: AsyncSession, account_id: str) -> None:
    """Makes this transaction's count of the account's things wait for any other creation of the same
    account to commit: the account's row locked until the transaction ends on PostgreSQL (SQLite runs
    one writer at a time anyway). Call it before counting."""
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(select(Account.id).where(Account.id == account_id).with_for_update())
