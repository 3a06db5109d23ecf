"""An account's revealed contacts, filtered like a search (D13, D30), read in keyset batches.

Both the CSV export and the dashboard's list read through here. Each contact is shown as
`GET /contacts/{id}` shows it to its buyer: values found bad withheld (``bad_fields``), its email's
status, and the suppression mark of a contact put on the list since. Batches are ordered by contact id
and each is read in a short transaction of its own, so a slow download holds no transaction open
and no more than one batch in memory.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ConfigDict, Field
from sqlalchemy import ColumnElement, Select, select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts import pricing
from vpx.contacts.search import SearchBackend, SearchQuery
from vpx.contacts.search.engine import BaseBackend
from vpx.db import Database
from vpx.deliverability.checks import EmailStatus
from vpx.exports.csvstream import cell, neutralised
from vpx.fields import SingleLine, StateCode, TrimmedModel, Vertical
from vpx.ids import parse_number_id
from vpx.models import Contact, ContactSource, Reveal
from vpx.suppression import service as suppression_service

BATCH_SIZE = 1000

COLUMNS = (
    "id",
    "business_name",
    "phone",
    "email",
    "website",
    "street",
    "city",
    "state",
    "postal_code",
    "country",
    "industry",
    "specialty",
    "license_type",
    "license_number",
    "license_state",
    "sources",
    "revealed_at",
    "credits_charged",
    # Added after the first columns, so that readers by position keep working.
    "email_status",
    "bad_fields",
    "suppressed_reason",
    "suppressed_since",
)

_SELECTED = (
    Contact.id,
    Contact.business_name,
    Contact.phone,
    Contact.email,
    Contact.website,
    Contact.street,
    Contact.city,
    Contact.state,
    Contact.postal_code,
    Contact.country,
    Contact.industry,
    Contact.specialty,
    Contact.license_type,
    Contact.license_number,
    Contact.license_state,
    Reveal.created_at.label("revealed_at"),
    Reveal.credits_charged,
    Contact.email_status,
    Contact.bad_fields,
    Contact.suppressed,
    # What the suppression marks match by hash (DROP's entries).
    Contact.email_hash,
    Contact.phone_hash,
)


class RevealedFilters(TrimmedModel):
    """The search filters of D13, applied to the contacts the account has revealed."""

    # An unknown parameter (a typo such as `sate`) is a 422, never silently ignored.
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    q: SingleLine | None = Field(default=None, max_length=200, description="Business name, category or keyword.")
    state: StateCode | None = None
    city: SingleLine | None = Field(default=None, max_length=120)
    industry: Vertical | None = None
    specialty: SingleLine | None = Field(default=None, max_length=200, description="Words the specialty starts with.")
    license_type: SingleLine | None = Field(default=None, max_length=120)
    email_status: EmailStatus | None = Field(
        default=None, description="Only contacts whose email has this status, such as `mx_found`."
    )

    def search_query(self) -> SearchQuery:
        return SearchQuery(
            text=self.q or None,
            state=self.state,
            city=self.city or None,
            industry=self.industry,
            specialty=self.specialty or None,
            license_type=self.license_type or None,
            email_status=self.email_status,
        )


@dataclass(frozen=True)
class RevealedQuery:
    """A planned filter: the plain filters and, when words were given, the full-text condition."""

    account_id: str
    search: SearchQuery
    matched: ColumnElement[bool] | None

    def statement(self) -> Select[*tuple[Any, ...]]:
        statement: Select[*tuple[Any, ...]] = (
            select(*_SELECTED)
            .join(Contact, Contact.id == Reveal.contact_id)
            .where(Reveal.account_id == self.account_id)
        )
        statement = BaseBackend.filtered(statement, self.search)
        if self.matched is not None:
            statement = statement.where(self.matched)
        return statement


async def plan_revealed_query(
    session: AsyncSession, *, account_id: str, filters: RevealedFilters, search: SearchBackend
) -> RevealedQuery:
    """Plans the words once (typo corrections need the vocabulary) with the search engine's own rules."""
    query = filters.search_query()
    return RevealedQuery(account_id=account_id, search=query, matched=await _text_condition(session, search, query))


async def _text_condition(session: AsyncSession, search: SearchBackend, query: SearchQuery) -> Any:
    """The contacts the words match, as the search engine plans and matches them; None without words."""
    return await search.matching_condition(session, query)


@dataclass(frozen=True)
class RevealedBatch:
    """A batch of revealed contacts in id order, their sources, and the suppression mark of those
    put on the list since (reason class and since when), as `GET /contacts/{id}` shows its buyers."""

    rows: list[Any]
    sources: dict[int, list[str]]
    marks: dict[int, tuple[str, datetime]]


async def revealed_page(session: AsyncSession, query: RevealedQuery, *, after: int, limit: int) -> RevealedBatch:
    """Up to ``limit`` revealed contacts with ids above ``after``, in id order, with their sources and
    suppression marks."""
    rows = list(
        (
            await session.execute(
                query.statement().where(Reveal.contact_id > after).order_by(Reveal.contact_id).limit(limit)
            )
        ).all()
    )
    marks = await suppression_service.marks_of(session, [row for row in rows if row.suppressed])
    return RevealedBatch(rows, await _sources(session, [row.id for row in rows]), dict(marks))


async def _sources(session: AsyncSession, contact_ids: Sequence[int]) -> dict[int, list[str]]:
    found: dict[int, list[str]] = defaultdict(list)
    if not contact_ids:
        return found
    result = await session.execute(
        select(ContactSource.contact_id, ContactSource.registry_name, ContactSource.record_id)
        .where(ContactSource.contact_id.in_(contact_ids))
        .order_by(ContactSource.contact_id, ContactSource.id)
    )
    for contact_id, registry, record_id in result:
        found[contact_id].append(f"{registry}:{record_id}")
    return found


def withheld(row: Any) -> int:
    """The bits of the row's fields found bad: shown to nobody, its earlier buyers included."""
    return int(row.bad_fields or 0) & pricing.fields_present(row)


def csv_row(row: Any, sources: list[str], mark: tuple[str, datetime] | None = None) -> list[str]:
    bad = withheld(row)

    def shown(name: str, value: str | None) -> str | None:
        return None if bad & pricing.FIELD_BITS[name] else value

    street = shown("address", row.street)
    free_text = (
        neutralised(cell(v))
        for v in (row.business_name, shown("email", row.email), shown("website", row.website), street, row.city)
    )
    name, email, website, street_cell, city = free_text
    return [
        f"ct_{row.id}",
        name,
        cell(shown("phone", row.phone)),
        email,
        website,
        street_cell,
        city,
        cell(row.state),
        neutralised(cell(row.postal_code if street is not None or row.street is None else None)),
        cell(row.country),
        cell(row.industry),
        neutralised(cell(row.specialty)),
        neutralised(cell(row.license_type)),
        neutralised(cell(row.license_number)),
        cell(row.license_state),
        neutralised("; ".join(sources)),
        cell(row.revealed_at),
        cell(row.credits_charged),
        cell(row.email_status if row.email is not None else None),
        "; ".join(pricing.field_names(bad)),
        cell(mark[0] if mark else None),
        cell(mark[1] if mark else None),
    ]


async def revealed_csv_batches(
    database: Database, query: RevealedQuery, *, batch_size: int | None = None
) -> AsyncIterator[list[list[str]]]:
    """CSV rows of every matching revealed contact, one batch (and one short read) at a time."""
    batch_size = batch_size or BATCH_SIZE
    after = 0
    while True:
        async with database.read_sessions() as session:
            batch = await revealed_page(session, query, after=after, limit=batch_size)
        rows = batch.rows
        if rows:
            yield [csv_row(row, batch.sources.get(row.id, []), batch.marks.get(row.id)) for row in rows]
        if len(rows) < batch_size:
            return
        after = rows[-1].id


async def revealed_among(session: AsyncSession, *, account_id: str, contact_ids: Sequence[str]) -> set[str]:
    """Which of these public contact ids the account has revealed."""
    numbers = [n for n in (parse_number_id("ct", c) for c in contact_ids) if n is not None]
    if not numbers:
        return set()
    found = await session.scalars(
        select(Reveal.contact_id).where(Reveal.account_id == account_id, Reveal.contact_id.in_(numbers))
    )
    return {f"ct_{n}" for n in found}
