"""Writing contacts: the one path by which demo data, registry imports and contributions enter the
catalogue, so matching keys and the search vocabulary are always filled in the same way."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.identifiers import joined, licence_of, registrable_domain
from vpx.contacts.normalise import clean_display, name_key, text_key, words
from vpx.contacts.search import SearchBackend
from vpx.models import Contact, ContactSource

SEARCHED_FIELDS = ("business_name", "specialty", "license_type", "industry", "city")


@lru_cache(maxsize=65536)
def _key(text: str | None) -> str | None:
    # Cities, specialties and licence types repeat endlessly in registry files: normalise each once.
    return text_key(text)


def contact_row(fields: dict[str, Any], *, origin: str, now: datetime) -> dict[str, Any]:
    """A contacts-table row from display fields, with every derived key filled."""
    name = clean_display(fields["business_name"])
    city = clean_display(fields["city"])
    return {
        "business_name": name,
        "name_key": name_key(name),
        "street": fields.get("street"),
        "city": city,
        "city_key": _key(city) or "",
        "state": fields["state"],
        "postal_code": fields.get("postal_code"),
        "country": fields.get("country", "US"),
        "phone": fields.get("phone"),
        "email": fields.get("email"),
        "website": fields.get("website"),
        "website_domain": registrable_domain(fields.get("website")),
        "industry": fields["industry"],
        "specialty": fields.get("specialty"),
        "specialty_key": _key(fields.get("specialty")),
        "license_type": fields.get("license_type"),
        "license_type_key": _key(fields.get("license_type")),
        "license_number": fields.get("license_number"),
        "license_state": fields.get("license_state"),
        # Strong identifiers (vpx.contacts.identifiers): as the source gives them, else the licence.
        "identifiers": fields["identifiers"] if "identifiers" in fields else joined([licence_of(fields)]),
        "status": fields.get("status", "active"),
        "origin": origin,
        "intent_level": None,
        "publisher_account_id": fields.get("publisher_account_id"),
        "created_at": now,
        "updated_at": now,
    }


def vocabulary(rows: Iterable[dict[str, Any]]) -> set[str]:
    """Every searchable word of these rows (what typo correction may correct to)."""
    values = {row[field] for row in rows for field in SEARCHED_FIELDS if row.get(field)}
    terms: set[str] = set()
    for value in values:
        terms.update(w for w in words(value.replace("-", " ")) if 2 <= len(w) <= 64)
    return terms


async def add_contacts(
    session: AsyncSession,
    rows: list[dict[str, Any]],
    *,
    search: SearchBackend,
    sources: Sequence[tuple[str, str, date | None]] | None = None,
    now: datetime,
) -> list[int]:
    """Inserts rows made by ``contact_row`` (with their provenance, one source per row) and returns
    their ids in order."""
    if not rows:
        return []
    result = await session.execute(insert(Contact).returning(Contact.id, sort_by_parameter_order=True), rows)
    ids = [row[0] for row in result]
    if sources is not None:
        await session.execute(
            insert(ContactSource),
            [
                {
                    "contact_id": contact_id,
                    "registry_name": registry,
                    "record_id": record_id,
                    "file_date": file_date,
                    "created_at": now,
                }
                for contact_id, (registry, record_id, file_date) in zip(ids, sources, strict=True)
            ],
        )
    await search.add_terms(session, vocabulary(rows))
    return ids
