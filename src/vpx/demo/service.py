"""Loading the demo catalogue and the demo account."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from itertools import islice

from sqlalchemy import func, select

from vpx.accounts import service as account_service
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType, hash_key
from vpx.config import Settings
from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.contacts.search import SearchBackend
from vpx.contacts.search import postings as search_postings
from vpx.credits import service as credit_service
from vpx.db import Database
from vpx.demo import deliverability as demo_deliverability
from vpx.demo.account import DEMO_EMAIL
from vpx.demo.generator import demo_contacts
from vpx.models import Account, ApiKey, Contact

CHUNK = 2000
TYPES = (KeyType.ro, KeyType.live, KeyType.full)
DEMO_KEY_NAME = "demo "  # the demo's keys are named "demo ro", "demo live", "demo full"


async def demo_catalogue_size(database: Database) -> int:
    async with database.read_sessions() as session:
        return int(await session.scalar(select(func.count()).select_from(Contact).where(Contact.origin == "demo")) or 0)


async def load_demo_catalogue(
    database: Database, *, count: int, seed: int, search: SearchBackend, now: datetime
) -> int:
    """Adds the demo contacts unless they are already there; returns how many were added. Either
    way the demo's answers for its email domains are recorded (vpx.demo.deliverability)."""
    added = 0
    if await demo_catalogue_size(database) == 0:
        generated = demo_contacts(count, seed=seed)
        while chunk := list(islice(generated, CHUNK)):
            rows = [contact_row(fields, origin="demo", now=now) for fields in chunk]
            sources = [("demo", fields["record_id"], None) for fields in chunk]
            async with database.write_sessions() as session, session.begin():
                await add_contacts(session, rows, search=search, sources=sources, now=now)
            added += len(rows)
    # Its emails checked with the demo's own answers (a catalogue loaded by an earlier version too),
    # before the fold below: the email_status filter is exact at once.
    await demo_deliverability.record_demo_answers(database, now=now)
    # The search postings of what was added, before the demo returns: searches are exact at once,
    # with or without a worker running.
    while await search_postings.fold_changes(database):
        pass
    return added


@dataclass(frozen=True)
class DemoKeys:
    account: Account
    secrets: dict[str, str]  # by type: "ro", "live", "full"
    revoked: int  # earlier keys revoked on the way (their secrets were not saved)


async def issue_demo_account(
    database: Database, *, now: datetime, settings: Settings, grant: Decimal, saved: Mapping[str, str] | None = None
) -> DemoKeys:
    """The demo account (created on first use) with a key of each type: the ``saved`` ones (the last
    run's, vpx.demo.account) that are still its active keys of their type, new ones for the others.
    Earlier demo keys not kept are revoked, and the account's oldest other keys too when the five-key
    limit would bite."""
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
        active = list(
            await session.scalars(
                select(ApiKey)
                .where(ApiKey.account_id == account.id, ApiKey.revoked_at.is_(None))
                .order_by(ApiKey.created_at, ApiKey.id)
            )
        )
        by_hash = {key.secret_hash: key for key in active}
        secrets: dict[str, str] = {}
        kept_ids: set[str] = set()
        for key_type in TYPES:
            secret = (saved or {}).get(key_type.value)
            found = by_hash.get(hash_key(secret)) if secret else None
            if secret and found is not None and found.key_type == key_type.value:
                secrets[key_type.value] = secret
                kept_ids.add(found.id)
        missing = [key_type for key_type in TYPES if key_type.value not in secrets]
        others = [key for key in active if key.id not in kept_ids]
        # The demo's own earlier keys first (nobody can print them again), then the oldest others.
        others.sort(key=lambda key: not key.name.startswith(DEMO_KEY_NAME))
        room = settings.max_active_keys - len(active)
        revoked = 0
        for key in others:
            if not key.name.startswith(DEMO_KEY_NAME) and room >= len(missing):
                break
            key.revoked_at = now
            revoked += 1
            room += 1
        await session.flush()
        for key_type in missing:
            _, secret = await key_service.create_key(
                session,
                account_id=account.id,
                key_type=key_type,
                name=f"{DEMO_KEY_NAME}{key_type.value}",
                ip_allowlist=[],
                now=now,
                settings=settings,
            )
            secrets[key_type.value] = secret
    ordered = {key_type.value: secrets[key_type.value] for key_type in TYPES}
    return DemoKeys(account=account, secrets=ordered, revoked=revoked)
