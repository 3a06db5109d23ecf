"""Helpers for the export tests."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal

from sqlalchemy import func, insert, literal, select

from tests.factories import Factory
from vpx.contacts.catalogue import contact_row
from vpx.db import UtcDateTime
from vpx.models import Contact, Reveal
from vpx.money import CreditsType

CHUNK = 5000


async def bulk_revealed(factory: Factory, account_id: str, count: int, *, now: datetime) -> None:
    """``count`` new contacts in the catalogue, all revealed by the account.

    Rows are made by ``contact_row`` (the catalogue's own derivation) but written in bulk, and the
    reveals by one INSERT … SELECT rather than through reveal_contact: 100,000 priced, ledgered
    reveals would take minutes, and the export reads only the contacts and the reveal rows.
    """
    async with factory.database.write_sessions() as session, session.begin():
        before = await session.scalar(select(func.coalesce(func.max(Contact.id), 0)))
        for start in range(0, count, CHUNK):
            rows = [contact_row(f, origin="registry", now=now) for f in _fields(start, min(count, start + CHUNK))]
            await session.execute(insert(Contact.__table__), rows)
        await session.execute(
            insert(Reveal).from_select(
                ["account_id", "contact_id", "credits_charged", "channel", "created_at"],
                select(
                    literal(account_id),
                    Contact.id,
                    literal(Decimal(1), CreditsType()),
                    literal("reveal"),
                    literal(now, UtcDateTime()),
                ).where(Contact.id > before),
            )
        )


NAMES = ("Summit", "Cedar", "Harbor", "Maple", "Granite", "Pioneer", "Beacon", "Willow", "Frontier", "Aspen")
TRADES = ("Plumbing", "Roofing", "Electric", "Heating", "Landscaping", "Painting", "Masonry", "Glass")


def _fields(start: int, stop: int) -> Iterable[dict[str, str]]:
    # Few distinct words, so the search vocabulary stays small however many rows there are.
    for n in range(start, stop):
        yield {
            "business_name": f"{NAMES[n % 10]} {TRADES[(n // 10) % 8]} Co",
            "city": "Denver",
            "state": "CO",
            "industry": "home-services",
            "phone": f"+1303555{n % 10_000:04d}",
            "email": f"office{n}@bulk.example",
            "website": f"https://bulk{n}.example",
            "street": f"{n} Main St",
            "postal_code": "80202",
            "specialty": "Plumbing",
            "license_type": "C-36 Plumbing Contractor",
            "license_number": f"CO-{n}",
            "license_state": "CO",
        }
