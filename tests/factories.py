"""Building test data through the services, never raw SQL."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from fastapi import FastAPI
from sqlalchemy import update

from vpx.accounts import service as account_service
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.clock import FixedClock
from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.credits import service as credit_service
from vpx.db import Database
from vpx.demo.generator import demo_contacts
from vpx.models import Contact
from vpx.suppression import service as suppression_service
from vpx.suppression.service import SuppressionKind, SuppressionReason


@dataclass
class TestAccount:
    id: str
    keys: dict[str, str]

    def headers(self, key_type: str = "live") -> dict[str, str]:
        return {"X-API-Key": self.keys[key_type]}


def details(n: int) -> dict[str, str]:
    """A phone, an email, a website and a street of their own for the n-th test contact: a reveal
    sells those four (a contact without them is cheaper, or free)."""
    return {
        "phone": f"+1202555{n % 10_000:04d}",
        "email": f"owner{n}@shop{n}.example",
        "website": f"https://shop{n}.example",
        "street": f"{n} Main St",
    }


class Factory:
    def __init__(self, app: FastAPI, clock: FixedClock) -> None:
        self.app = app
        self.clock = clock

    @property
    def database(self) -> Database:
        database: Database = self.app.state.database
        return database

    async def account(
        self,
        *,
        credits: Decimal | int = 0,
        key_types: tuple[str, ...] = ("ro", "live", "full"),
        name: str = "Test account",
        email: str | None = None,
    ) -> TestAccount:
        """An account on the free plan (25 free credits) plus ``credits`` granted, with keys."""
        settings = self.app.state.settings
        now = self.clock.now()
        async with self.database.write_sessions() as session, session.begin():
            account = await account_service.create_account(
                session, name=name, email=email, plan="free", now=now, settings=settings
            )
            if credits:
                await credit_service.add_credits(
                    session,
                    account_id=account.id,
                    amount=Decimal(credits),
                    kind="grant",
                    reference=None,
                    description="test grant",
                    now=now,
                    settings=settings,
                )
            keys = {}
            for key_type in key_types:
                _, secret = await key_service.create_key(
                    session,
                    account_id=account.id,
                    key_type=KeyType(key_type),
                    name=key_type,
                    ip_allowlist=[],
                    now=now,
                    settings=settings,
                )
                keys[key_type] = secret
        return TestAccount(id=account.id, keys=keys)

    async def key(self, account_id: str, key_type: str = "live", ip_allowlist: list[str] | None = None) -> str:
        async with self.database.write_sessions() as session, session.begin():
            _, secret = await key_service.create_key(
                session,
                account_id=account_id,
                key_type=KeyType(key_type),
                name="extra",
                ip_allowlist=ip_allowlist or [],
                now=self.clock.now(),
                settings=self.app.state.settings,
            )
        return secret

    async def contacts(self, rows: list[dict[str, Any]], *, origin: str = "registry") -> list[str]:
        """Adds contacts from display fields; returns their public ids."""
        now = self.clock.now()
        full = [contact_row(fields, origin=origin, now=now) for fields in rows]
        sources = [(origin, fields.get("record_id") or f"test-{uuid.uuid4().hex}", None) for fields in rows]
        async with self.database.write_sessions() as session, session.begin():
            ids = await add_contacts(session, full, search=self.app.state.search, sources=sources, now=now)
        return [f"ct_{i}" for i in ids]

    async def contact(self, **fields: Any) -> str:
        base = {
            "business_name": "Acme Plumbing LLC",
            "city": "Denver",
            "state": "CO",
            "industry": "home-services",
            "phone": "+13035550100",
            "email": "info@acmeplumbing.example",
            "website": "https://acmeplumbing.example",
            "street": "1 Main St",
            "postal_code": "80202",
            "specialty": "Plumbing",
            "license_type": "C-36 Plumbing Contractor",
            "license_number": "CO-123",
            "license_state": "CO",
        }
        base.update(fields)
        return (await self.contacts([base]))[0]

    async def demo(self, count: int = 600, seed: int = 7) -> list[str]:
        return await self.contacts(list(demo_contacts(count, seed=seed)), origin="demo")

    async def deactivate(self, contact_id: str) -> None:
        async with self.database.write_sessions() as session, session.begin():
            await session.execute(
                update(Contact).where(Contact.id == int(contact_id.removeprefix("ct_"))).values(status="deactivated")
            )

    async def rename(self, contact_id: str, business_name: str) -> None:
        async with self.database.write_sessions() as session, session.begin():
            await session.execute(
                update(Contact)
                .where(Contact.id == int(contact_id.removeprefix("ct_")))
                .values(business_name=business_name)
            )

    async def set_intent(self, contact_id: str, level: str | None) -> None:
        async with self.database.write_sessions() as session, session.begin():
            await session.execute(
                update(Contact).where(Contact.id == int(contact_id.removeprefix("ct_"))).values(intent_level=level)
            )

    async def suppress(self, kind: str, value: str, reason: str = "opt_out") -> None:
        async with self.database.write_sessions() as session, session.begin():
            await suppression_service.add_suppression(
                session,
                kind=SuppressionKind(kind),
                value=value,
                reason=SuppressionReason(reason),
                note="",
                now=self.clock.now(),
            )
