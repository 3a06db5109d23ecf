"""Search, previews and the full record of a revealed contact; reveals go through vpx.contacts.reveal,
where their rules are (suppression first, then charge-once, the price, one debit, the ledger)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.compliance.dnc import service as dnc_service
from vpx.config import Settings
from vpx.contacts import pricing, reveal
from vpx.contacts.pricing import reveal_price as reveal_price

# Re-exported: batch reveals, auto-buy and signals price and lock through this module.
from vpx.contacts.reveal import RevealOutcome as RevealOutcome
from vpx.contacts.reveal import lock_accounts as lock_accounts
from vpx.contacts.reveal import revenue_share as revenue_share
from vpx.contacts.schemas import (
    ContactPreview,
    Interpretation,
    PhoneDnc,
    RevealedContact,
    SearchResult,
    SourceRef,
    SuppressionMark,
)
from vpx.contacts.search import Reader, SearchBackend, SearchQuery
from vpx.credits import service as credit_service
from vpx.db import Database
from vpx.deliverability import checks as email_checks
from vpx.errors import NotFound
from vpx.ids import parse_number_id, public_number_id
from vpx.models import Contact, ContactSource, Reveal
from vpx.suppression import service as suppression_service
from vpx.suppression.reasons import reason_class

if TYPE_CHECKING:
    from vpx.batches.prefetch import RevealPrefetch


def contact_public_id(contact_id: int) -> str:
    return public_number_id("ct", contact_id)


def _preview(
    contact_id: int,
    business_name: str,
    city: str,
    state: str,
    industry: str,
    price: Decimal,
    for_sale: int,
    email_deliverable: bool,
) -> ContactPreview:
    # Built from database values of known types: no validation (a page of 25 previews validated
    # field by field cost a tenth of a search's time).
    return ContactPreview.model_construct(
        id=contact_public_id(contact_id),
        business_name=business_name,
        city=city,
        state=state,
        industry=industry,
        reveal_cost=price,
        has_phone=bool(for_sale & pricing.FIELD_BITS["phone"]),
        has_email=bool(for_sale & pricing.FIELD_BITS["email"]),
        has_website=bool(for_sale & pricing.FIELD_BITS["website"]),
        has_address=bool(for_sale & pricing.FIELD_BITS["address"]),
        email_deliverable=email_deliverable,
    )


def _sale(row: Any, settings: Settings) -> tuple[Decimal, int, bool]:
    """The price, the fields a reveal sells, and whether the email it sells is deliverable."""
    for_sale = pricing.fields_for_sale(row)
    deliverable = bool(for_sale & pricing.FIELD_BITS["email"]) and email_checks.deliverable(row.email, row.email_status)
    return pricing.price_of(row.intent_level, for_sale, settings), for_sale, deliverable


def preview_of(row: Any, settings: Settings) -> ContactPreview:
    """A preview from a contacts row (a ``Contact`` or a row of the search's preview columns): which
    fields a reveal sells, never their values, and whether the email is deliverable."""
    return _preview(row.id, row.business_name, row.city, row.state, row.industry, *_sale(row, settings))


async def search_contacts(
    session: Reader, *, backend: SearchBackend, query: SearchQuery, settings: Settings
) -> SearchResult:
    page = await backend.search(session, query)
    return SearchResult(
        contacts=[preview_of(row, settings) for row in page.rows],
        total=page.total,
        limit=query.limit,
        offset=query.offset,
        exact=page.exact,
        interpreted=Interpretation(**page.interpreted.as_dict()) if page.interpreted is not None else None,
    )


@lru_cache(maxsize=65_536)
def _preview_json(
    contact_id: int,
    business_name: str,
    city: str,
    state: str,
    industry: str,
    price: Decimal,
    for_sale: int,
    email_deliverable: bool,
) -> bytes:
    preview = _preview(contact_id, business_name, city, state, industry, price, for_sale, email_deliverable)
    return preview.__pydantic_serializer__.to_json(preview)


async def search_contacts_json(
    session: Reader, *, backend: SearchBackend, query: SearchQuery, settings: Settings
) -> bytes:
    """The search envelope as JSON, byte for byte what ``search_contacts(…).model_dump_json()`` gives.

    Each preview's JSON is remembered by its values (the row as read and its price): a repeated
    search rebuilt and serialised 25 preview models per request, a third of a remembered search's
    time in Python. A contact whose name or intent level changes has other values, so never an old
    preview; the page itself is read from the database on every request as before."""
    page = await backend.search(session, query)
    previews = b",".join(
        _preview_json(
            row.id,
            row.business_name,
            row.city,
            row.state,
            row.industry,
            *_sale(row, settings),
        )
        for row in page.rows
    )
    interpreted = (
        Interpretation(**page.interpreted.as_dict()).model_dump_json().encode() if page.interpreted else b"null"
    )
    return b'{"contacts":[%s],"total":%d,"limit":%d,"offset":%d,"exact":%s,"interpreted":%s}' % (
        previews,
        page.total,
        query.limit,
        query.offset,
        b"true" if page.exact else b"false",
        interpreted,
    )


async def load_contact(session: AsyncSession, public_id: str) -> Contact:
    """An active contact by its public id; NotFound otherwise."""
    number = parse_number_id("ct", public_id)
    contact = await session.get(Contact, number) if number is not None else None
    if contact is None or contact.status != "active":
        raise NotFound(f"No contact {public_id}.")
    return contact


async def sources_of(session: AsyncSession, contact_id: int) -> list[SourceRef]:
    rows = await session.scalars(
        select(ContactSource).where(ContactSource.contact_id == contact_id).order_by(ContactSource.id)
    )
    return [SourceRef(registry=s.registry_name, record_id=s.record_id, file_date=s.file_date) for s in rows]


async def revealed_view(
    session: AsyncSession,
    contact: Contact,
    *,
    now: datetime,
    revealed_at: datetime,
    charged: Decimal,
    remaining: Decimal,
    sources: list[SourceRef] | None = None,
    phone_dnc: dict[str, PhoneDnc] | None = None,
) -> RevealedContact:
    """The revealed record; ``phone_dnc``: the phones' do-not-call states when the caller read them
    already (a batch), else the phone's is read here."""
    states = (
        phone_dnc if phone_dnc is not None else await dnc_service.lookup(session, [contact.phone], today=now.date())
    )
    return reveal.revealed_record(
        contact,
        sources if sources is not None else await sources_of(session, contact.id),
        revealed_at=revealed_at,
        charged=charged,
        remaining=remaining,
        phone_dnc=states.get(contact.phone) if contact.phone else None,
    )


async def find_reveal(session: AsyncSession, *, account_id: str, contact_id: int) -> Reveal | None:
    return await session.scalar(select(Reveal).where(Reveal.account_id == account_id, Reveal.contact_id == contact_id))


async def reveal_contact(
    session: AsyncSession,
    *,
    account_id: str,
    contact_id: str,
    channel: str,
    ledger_kind: str,
    now: datetime,
    settings: Settings,
    accounts_locked: bool = False,
    batch_id: str | None = None,
    prefetch: RevealPrefetch | None = None,
    ledger_description: str | None = None,
    standalone: Database | None = None,
) -> RevealOutcome:
    """Reveals a contact to an account under every reveal rule: ``vpx.contacts.reveal.reveal_one``
    says them, and what ``accounts_locked``, ``prefetch`` and ``standalone`` change."""
    locked = accounts_locked or prefetch is not None
    return await reveal.reveal_one(
        session,
        account_id=account_id,
        contact_id=contact_id,
        channel=channel,
        ledger_kind=ledger_kind,
        now=now,
        settings=settings,
        ledger_description=ledger_description,
        standalone=standalone,
        accounts_locked=locked,
        prefetch=prefetch,
        # contact.revealed names the batch of every batch item, run at once or by the worker (docs/
        # webhooks.md; the worker's unlocked items said null until the reveal paths became one).
        batch_id=batch_id,
    )


async def contact_for_account(
    session: AsyncSession, *, account_id: str, contact_id: str, now: datetime, settings: Settings
) -> ContactPreview | RevealedContact:
    """D14: the full record to an account that revealed the contact, else the preview. A suppressed
    contact has left previews (404 to anyone who did not reveal it); its buyers see it marked."""
    contact = await load_contact(session, contact_id)
    previous = await find_reveal(session, account_id=account_id, contact_id=contact.id)
    if previous is None:
        if contact.suppressed:
            raise NotFound(f"No contact {contact_id}.")
        return preview_of(contact, settings)
    balance = await credit_service.effective_balance(session, account_id=account_id, now=now, settings=settings)
    view = await revealed_view(
        session, contact, now=now, revealed_at=previous.created_at, charged=Decimal(0), remaining=balance.total
    )
    entry = await suppression_service.find_suppression(session, contact) if contact.suppressed else None
    if entry is not None:
        view.suppressed = SuppressionMark(reason=reason_class(entry.reason), since=entry.created_at)
    return view
