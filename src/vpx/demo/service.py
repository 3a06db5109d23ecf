"""Loading the demo catalogue and the demo account."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from itertools import islice

from sqlalchemy import func, select

from vpx.accounts import service as account_service
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.config import Settings
from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.contacts.search import SearchBackend
from vpx.credits import service as credit_service
from vpx.db import Database
from vpx.demo.generator import demo_contacts
from vpx.models import Account, ApiKey, Contact

DEMO_EMAIL = "demo@vpx.example"
CHUNK = 2000


async def demo_catalogue_size(database: Database) -> int:
    async with database.read_sessions() as session:
        return int(await session.scalar(select(func.count()).select_from(Contact).where(Contact.origin == "demo")) or 0)


async def load_demo_catalogue(
    database: Database, *, count: int, seed: int, search: SearchBackend, now: datetime
) -> int:
    """Adds the demo contacts unless they are already there; returns how many were added."""
    if await demo_catalogue_size(database) > 0:
        return 0
    added = 0
    generated = demo_contacts(count, seed=seed)
    while chunk := list(islice(generated, CHUNK)):
        rows = [contact_row(fields, origin="demo", now=now) for fields in chunk]
        sources = [("demo", fields["record_id"], None) for fields in chunk]
        async with database.write_sessions() as session, session.begin():
            await add_contacts(session, rows, search=search, sources=sources, now=now)
        added += len(rows)
    return added


async def issue_demo_account(
    database: Database, *, now: datetime, settings: Settings, grant: Decimal
) -> tuple[Account, dict[str, str]]:
    """The demo account (created on first use) with a fresh key of each type; earlier demo keys are
    revoked so the five-key limit never bites."""
    async with database.write_sessions() as session, session.begin():
        account = await session.scalar(select(Account).where(Account.email == DEMO_EMAIL))
        if account is None:
            account = await account_service.create_account(
                session, name="Demo account", email=DEMO_EMAIL, plan="free", now=now, settings=settings
            )
            if grant > 0:
                await credit_service.add_credits(
                    session,
                    account_id=account.id,
                    amount=grant,
                    kind="grant",
                    reference=None,
                    description="Demo credits",
                    now=now,
                    settings=settings,
                )
        for key in await session.scalars(
            select(ApiKey).where(ApiKey.account_id == account.id, ApiKey.revoked_at.is_(None))
        ):
            key.revoked_at = now
        await session.flush()
        secrets: dict[str, str] = {}
        for key_type in (KeyType.ro, KeyType.live, KeyType.full):
            _, secret = await key_service.create_key(
                session,
                account_id=account.id,
                key_type=key_type,
                name=f"demo {key_type.value}",
                ip_allowlist=[],
                now=now,
                settings=settings,
            )
            secrets[key_type.value] = secret
    return account, secrets
