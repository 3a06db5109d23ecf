"""What a reveal reads of one contact for one buyer (vpx.contacts.reveal): one statement, built once
at import, for the contact, the buyer's earlier reveal of it, the first suppression entry that covers
it, the buyer's balance and free month, and whether the buyer has an active webhook endpoint; or the
same from a batch's prefetch.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Table, and_, bindparam, exists, func, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from vpx.compliance.dnc import service as dnc_service
from vpx.contacts.schemas import PhoneDnc, SourceRef
from vpx.db import Database
from vpx.models import Account, Contact, ContactSource, DncAreaCode, Reveal, Suppression, WebhookEndpoint

if TYPE_CHECKING:
    from vpx.batches.prefetch import RevealPrefetch

_contacts: Table = Contact.__table__  # type: ignore[assignment]
_reveals: Table = Reveal.__table__  # type: ignore[assignment]
_accounts: Table = Account.__table__  # type: ignore[assignment]
_suppressions: Table = Suppression.__table__  # type: ignore[assignment]
_endpoints: Table = WebhookEndpoint.__table__  # type: ignore[assignment]
_sources: Table = ContactSource.__table__  # type: ignore[assignment]
_area_codes: Table = DncAreaCode.__table__  # type: ignore[assignment]

_CONTACT_COLUMNS = [
    _contacts.c[name]
    for name in (
        "id",
        "business_name",
        "city",
        "state",
        "industry",
        "phone",
        "email",
        "email_status",
        "email_flags",
        "email_checked_at",
        "website",
        "street",
        "postal_code",
        "country",
        "specialty",
        "license_type",
        "license_number",
        "license_state",
        "status",
        "intent_level",
        "publisher_account_id",
        "bad_fields",
        "phone_dnc",
    )
]

_EARLIER_REVEAL = (
    select(_reveals.c.created_at)
    .where(_reveals.c.account_id == bindparam("account_id"), _reveals.c.contact_id == _contacts.c.id)
    .scalar_subquery()
)
# D15: by the contact's id, its phone, or its email (stored lower-cased; see _suppression_of), or
# DROP's hash of either (vpx.compliance).
_SUPPRESSION = (
    select(_suppressions.c.id)
    .where(
        or_(
            and_(_suppressions.c.kind == "contact", _suppressions.c.value == bindparam("public_id")),
            and_(_suppressions.c.kind == "phone", _suppressions.c.value == _contacts.c.phone),
            and_(_suppressions.c.kind == "email", _suppressions.c.value == func.lower(_contacts.c.email)),
            and_(_suppressions.c.kind == "email_hash", _suppressions.c.value == _contacts.c.email_hash),
            and_(_suppressions.c.kind == "phone_hash", _suppressions.c.value == _contacts.c.phone_hash),
        )
    )
    .order_by(_suppressions.c.id)
    .limit(1)
    .scalar_subquery()
)
# The registry version held for the phone's area code (its state is contacts.phone_dnc).
_DNC_VERSION = (
    select(_area_codes.c.version_date)
    .where(_area_codes.c.area_code == func.substr(_contacts.c.phone, 3, 3))
    .scalar_subquery()
)
_HAS_ENDPOINT = exists().where(_endpoints.c.account_id == bindparam("account_id"), _endpoints.c.status == "active")
_SNAPSHOT = (
    select(
        *_CONTACT_COLUMNS,
        _accounts.c.plan,
        _accounts.c.free_credits,
        _accounts.c.paid_credits,
        _accounts.c.free_period,
        _EARLIER_REVEAL.label("revealed_at"),
        _SUPPRESSION.label("suppression_id"),
        _HAS_ENDPOINT.label("has_endpoint"),
        _DNC_VERSION.label("dnc_version"),
        _sources.c.registry,
        _sources.c.record_id,
        _sources.c.file_date,
    )
    # One row per source (at least one row): the join's condition names the buyer.
    .select_from(
        _contacts.join(_accounts, _accounts.c.id == bindparam("account_id")).outerjoin(
            _sources, _sources.c.contact_id == _contacts.c.id
        )
    )
    .where(_contacts.c.id == bindparam("contact_id"))
    .order_by(_sources.c.id)
)


async def _suppression_of(connection: AsyncConnection, row: Any) -> Any:
    """The entry the snapshot found, loaded. SQL's lower() folds ASCII only: an email with other
    capitals is looked up again with Python's folding, as entries were stored."""
    email = row.email
    if row.suppression_id is None and not (email and not email.isascii() and email.lower() != email):
        return None
    condition = (
        _suppressions.c.id == row.suppression_id
        if row.suppression_id is not None
        else and_(_suppressions.c.kind == "email", _suppressions.c.value == email.lower())
    )
    return (await connection.execute(select(_suppressions.c.id, _suppressions.c.reason).where(condition))).one_or_none()


async def phone_dnc_of(session: AsyncSession, row: Any, now: datetime) -> PhoneDnc | None:
    """The phone's do-not-call state from the snapshot (its contacts.phone_dnc and its area code's
    version); a phone the person asked not to be called on has the registry read apart (rare)."""
    if not row.phone:
        return None
    if row.phone_dnc == "requested":
        return (await dnc_service.lookup(session, [row.phone], today=now.date()))[row.phone]
    return dnc_service.from_column(row.phone_dnc, row.dnc_version, today=now.date())


@dataclass(frozen=True)
class Found:
    """What the rules read of one active contact for one buyer, from the database or a batch's prefetch."""

    row: Any  # the contact's columns: a snapshot row, or a ``Contact``
    sources: list[SourceRef]
    revealed_at: datetime | None  # the buyer's earlier reveal
    suppression: Any | None  # the first entry that covers it: ``id`` and ``reason``
    notify: bool  # whether the buyer may subscribe to contact.revealed at all


async def read(
    session: AsyncSession,
    params: dict[str, Any],
    *,
    standalone: Database | None,
    accounts_locked: bool,
) -> Found | None:
    """The snapshot (one statement), and the suppression entry it points at; None for no active contact."""
    if standalone is not None:
        async with standalone.autocommit_engine.connect() as reader:
            rows = (await reader.execute(_SNAPSHOT, params)).all()
            hit = await _suppression_of(reader, rows[0]) if rows else None
    else:
        if accounts_locked:
            # Rows the caller has pending (an earlier reveal of this transaction) are read as they stand.
            await session.flush()
        connection = await session.connection()
        rows = (await connection.execute(_SNAPSHOT, params)).all()
        hit = await _suppression_of(connection, rows[0]) if rows else None
    if not rows or rows[0].status != "active":
        return None
    row = rows[0]
    sources = [
        SourceRef(registry=r.registry, record_id=r.record_id, file_date=r.file_date)
        for r in rows
        if r.registry is not None
    ]
    return Found(row, sources, row.revealed_at, hit, notify=bool(row.has_endpoint))


def prefetched(prefetch: RevealPrefetch, number: int) -> Found | None:
    """The same, from what a batch read once for all its ids (vpx.batches.prefetch)."""
    contact = prefetch.contacts.get(number)
    if contact is None or contact.status != "active":
        return None
    earlier = prefetch.reveals.get(number)
    return Found(
        contact,
        prefetch.sources.get(number, []),
        earlier.created_at if earlier is not None else None,
        prefetch.suppressions.get(number),
        notify=prefetch.revealed_subscribed,
    )


async def earlier_reveal(session: AsyncSession, account_id: str, contact_id: int) -> datetime:
    """When the account revealed the contact: a request that committed while this one ran did (D10)."""
    found = await session.scalar(
        select(_reveals.c.created_at).where(_reveals.c.account_id == account_id, _reveals.c.contact_id == contact_id)
    )
    assert found is not None
    return cast(datetime, found)
