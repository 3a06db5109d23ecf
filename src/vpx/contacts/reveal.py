"""One contact revealed to one account in as few statements as the rules allow (D9, D10, D11, D15,
D17, D29). The API's reveal endpoints, signal purchases and the dashboard come through here.

1. One read: the contact, this account's earlier reveal of it, the first suppression entry that
   covers it (by id, phone or email), the buyer's balance and free month, and whether the account
   has an active webhook endpoint at all.
2. Its sources (for the revealed record).
3. A new reveal: the reveal row (its unique (account, contact) pair turns a concurrent twin into a
   free repeat), one conditional debit (vpx.credits.service), its ledger entry; then only where they
   apply, the publisher's revenue share and the outbox rows.

Statements are built once, at import: building a statement costs more than running it here.
On SQLite the write lock is taken by the first read and held to commit (``BEGIN IMMEDIATE``): the
whole transaction is a handful of statements.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_DOWN, Decimal
from typing import Any, cast

from sqlalchemy import BigInteger, SmallInteger, Table, and_, bindparam, exists, func, or_, select, text, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from vpx import metrics
from vpx.clock import month_key
from vpx.compliance.dnc import service as dnc_service
from vpx.config import Settings
from vpx.contacts import pricing
from vpx.contacts.schemas import Address, License, PhoneDnc, RevealedContact, SourceRef
from vpx.credits import service as credit_service
from vpx.db import Database, UtcDateTime
from vpx.deliverability import checks as email_checks
from vpx.errors import NotFound, Suppressed
from vpx.ids import parse_number_id, public_number_id
from vpx.models import Account, Contact, ContactSource, DncAreaCode, Reveal, Suppression, WebhookEndpoint
from vpx.money import QUANTUM, CreditsType
from vpx.suppression import service as suppression_service
from vpx.webhooks import events as webhook_events
from vpx.webhooks import outbox as webhook_outbox

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

# PostgreSQL: the whole charge of a plain reveal paid from carried-over credits as one statement,
# so one round trip in autocommit mode instead of BEGIN, four statements and COMMIT. The debit
# decides: no row back means the balance is short, the free month has turned, or the account has
# free credits after all (the transactional path handles each, and knows what came from free
# credits); a reveal row that already exists (a concurrent twin) fails the statement on the unique
# pair, debit included, and the reveal is a free repeat (D10).
_CHARGE_POSTGRESQL = (
    text(
        """
    WITH debit AS (
        UPDATE accounts SET paid_credits = paid_credits - :price
        WHERE id = :account_id AND free_period = :period AND free_credits = 0 AND paid_credits >= :price
        RETURNING free_credits, paid_credits
    ), revealed AS (
        INSERT INTO reveals (account_id, contact_id, credits_charged, channel, created_at, fields_sold)
        SELECT :account_id, :contact_id, :price, :channel, :now, :fields FROM debit
        RETURNING id
    ), entry AS (
        INSERT INTO ledger_entries (account_id, kind, amount, balance_after, reference, description, created_at)
        SELECT :account_id, :kind, 0 - :price, free_credits + paid_credits, :reference, :description, :now FROM debit
        RETURNING id
    )
    SELECT free_credits, paid_credits FROM debit
    """
    )
    .bindparams(
        bindparam("price", type_=CreditsType()),
        bindparam("now", type_=UtcDateTime()),
        bindparam("contact_id", type_=BigInteger()),
        bindparam("fields", type_=SmallInteger()),
    )
    .columns(free_credits=CreditsType(), paid_credits=CreditsType())
)

_REVEAL_VALUES: dict[str, Any] = {
    "account_id": bindparam("account_id"),
    "contact_id": bindparam("contact_id"),
    "credits_charged": bindparam("price", type_=CreditsType()),
    "channel": bindparam("channel"),
    "created_at": bindparam("now", type_=UtcDateTime()),
    "fields_sold": bindparam("fields"),
}
# INSERT … ON CONFLICT DO NOTHING RETURNING id, per dialect: None back means the pair exists.
_INSERT_REVEAL = {
    dialect: build(_reveals).values(_REVEAL_VALUES).on_conflict_do_nothing().returning(_reveals.c.id)
    for dialect, build in (("postgresql", postgresql_insert), ("sqlite", sqlite_insert))
}


async def lock_accounts(session: AsyncSession, account_ids: Iterable[str]) -> None:
    """Locks account rows in id order (PostgreSQL; SQLite's write transaction already serialises).

    Every transaction that changes more than one balance takes its locks through here first, in the
    same order, so two accounts revealing each other's contributions at once cannot deadlock (D17).
    The lock is FOR NO KEY UPDATE, what a balance UPDATE takes anyway: it does not conflict with the
    KEY SHARE locks that inserting rows which reference an account (reveals, ledger entries) takes.
    """
    ids = sorted(set(account_ids))
    if ids and session.get_bind().dialect.name != "sqlite":
        await session.execute(
            select(Account.id).where(Account.id.in_(ids)).order_by(Account.id).with_for_update(key_share=True)
        )


def revenue_share(price: Decimal, settings: Settings) -> Decimal:
    """D17: the publisher's share of a reveal's price, rounded down to 1/10,000 credit (a share is
    never more than the percentage of what was paid)."""
    return (price * settings.revenue_share_percent / 100).quantize(QUANTUM, rounding=ROUND_DOWN)


def revealed_record(
    row: Any,
    sources: list[SourceRef],
    *,
    revealed_at: datetime,
    charged: Decimal,
    remaining: Decimal,
    phone_dnc: PhoneDnc | None = None,
) -> RevealedContact:
    """D14's full record, from a row with the contact's columns (a ``Contact`` or a row of them). A
    value found bad is not shown (``bad_fields`` names it): nobody is sold it again. ``phone_dnc``:
    the phone's do-not-call state (vpx.compliance.dnc), shown with the phone."""
    bad = int(row.bad_fields or 0) & pricing.fields_present(row)

    def shown(name: str, value: str | None) -> str | None:
        return None if bad & pricing.FIELD_BITS[name] else value

    street = shown("address", row.street)
    phone = shown("phone", row.phone)
    return RevealedContact(
        id=public_number_id("ct", row.id),
        business_name=row.business_name,
        city=row.city,
        state=row.state,
        industry=row.industry,
        phone=phone,
        phone_dnc=phone_dnc if phone is not None else None,
        email=shown("email", row.email),
        **email_checks.revealed_fields(row),
        website=shown("website", row.website),
        address=Address(
            street=street,
            city=row.city,
            state=row.state,
            postal_code=row.postal_code if street is not None or row.street is None else None,
            country=row.country,
        ),
        bad_fields=pricing.field_names(bad),
        specialty=row.specialty,
        license=License(type=row.license_type, number=row.license_number, state=row.license_state),
        sources=sources,
        revealed_at=revealed_at,
        credits_charged=charged,
        credits_remaining=remaining,
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


async def _phone_dnc_of(session: AsyncSession, row: Any, now: datetime) -> PhoneDnc | None:
    """The phone's do-not-call state from the snapshot (its contacts.phone_dnc and its area code's
    version); a phone the person asked not to be called on has the registry read apart (rare)."""
    if not row.phone:
        return None
    if row.phone_dnc == "requested":
        return (await dnc_service.lookup(session, [row.phone], today=now.date()))[row.phone]
    return dnc_service.from_column(row.phone_dnc, row.dnc_version, today=now.date())


@dataclass(frozen=True)
class RevealOutcome:
    contact: RevealedContact
    charged: Decimal
    remaining: Decimal
    already_revealed: bool


async def reveal_one(
    session: AsyncSession,
    *,
    account_id: str,
    contact_id: str,
    channel: str,
    ledger_kind: str,
    now: datetime,
    settings: Settings,
    ledger_description: str | None = None,
    standalone: Database | None = None,
) -> RevealOutcome:
    """Reveals a contact. Suppressed (451),
    unknown (404) or unaffordable (402) reveals charge nothing.

    ``standalone``: the caller writes nothing else in ``session``'s transaction, so the reads run
    outside it (on SQLite the write lock is then held for the writes only) and on PostgreSQL a
    plain charge is one autocommitted statement.
    """
    number = parse_number_id("ct", contact_id)
    if number is None:
        raise NotFound(f"No contact {contact_id}.")
    public_id = public_number_id("ct", number)
    params = {"contact_id": number, "account_id": account_id, "public_id": public_id}
    if standalone is not None:
        async with standalone.autocommit_engine.connect() as reader:
            rows = (await reader.execute(_SNAPSHOT, params)).all()
            hit = await _suppression_of(reader, rows[0]) if rows else None
    else:
        connection = await session.connection()
        rows = (await connection.execute(_SNAPSHOT, params)).all()
        hit = await _suppression_of(connection, rows[0]) if rows else None
    if not rows or rows[0].status != "active":
        raise NotFound(f"No contact {contact_id}.")
    row = rows[0]
    if hit is not None:
        await suppression_service.record_hit(
            session, account_id=account_id, contact_id=number, suppression_id=hit.id, now=now
        )
        metrics.observe_reveal("suppressed", Decimal(0))
        raise Suppressed(
            suppression_service.refusal(
                public_id, hit.reason, revealed=row.revealed_at is not None, outcome="nothing was charged"
            )
        )
    sources = [
        SourceRef(registry=r.registry, record_id=r.record_id, file_date=r.file_date)
        for r in rows
        if r.registry is not None
    ]
    dnc = await _phone_dnc_of(session, row, now)

    revealed_at = row.revealed_at
    if revealed_at is None:
        fields = pricing.fields_for_sale(row)
        price = pricing.price_of(row.intent_level, fields, settings)
        publisher = row.publisher_account_id if row.publisher_account_id not in (None, account_id) else None
        description = ledger_description or f"Reveal of {public_id} ({row.business_name})"
        charge = {
            "account_id": account_id,
            "contact_id": number,
            "price": price,
            "channel": channel,
            "now": now,
            "period": month_key(now),
            "kind": ledger_kind,
            "reference": public_id,
            "description": description,
            "fields": fields,
        }
        if (
            standalone is not None
            and not standalone.is_sqlite
            and publisher is None
            and not row.has_endpoint
            and row.free_period == charge["period"]
            and row.free_credits == 0
            and price > 0
        ):
            try:
                async with standalone.autocommit_engine.connect() as writer:
                    charged = (await writer.execute(_CHARGE_POSTGRESQL, charge)).one_or_none()
            except IntegrityError:
                charged, revealed_at = None, await _earlier_reveal(session, account_id, number)
            if charged is not None:
                remaining = charged.free_credits + charged.paid_credits
                metrics.observe_reveal("revealed", price)
                record = revealed_record(
                    row, sources, revealed_at=now, charged=price, remaining=remaining, phone_dnc=dnc
                )
                return RevealOutcome(record, price, remaining, already_revealed=False)
        if revealed_at is None:
            revealed = await _charge_in_transaction(session, row, sources, charge, publisher, settings, dnc)
            if revealed is not None:
                return revealed
            revealed_at = await _earlier_reveal(session, account_id, number)

    if row.free_period == month_key(now):
        remaining = row.free_credits + row.paid_credits
    else:
        remaining = (
            await credit_service.refresh_free_credits(session, account_id=account_id, now=now, settings=settings)
        ).total
    metrics.observe_reveal("already_revealed", Decimal(0))
    record = revealed_record(
        row, sources, revealed_at=revealed_at, charged=Decimal(0), remaining=remaining, phone_dnc=dnc
    )
    return RevealOutcome(record, Decimal(0), remaining, already_revealed=True)


async def settle(
    session: AsyncSession,
    *,
    account_id: str,
    publisher: str | None,
    price: Decimal,
    public_id: str,
    business_name: str,
    record: RevealedContact,
    notify: bool,
    batch_id: str | None,
    now: datetime,
    settings: Settings,
) -> None:
    """What follows a new reveal's charge, in its transaction: the publisher's revenue share (D17),
    the metric, and ``contact.revealed`` for the account's webhook subscriptions (D29) when
    ``notify`` (the account may have some)."""
    share = revenue_share(price, settings) if publisher is not None else Decimal(0)
    if publisher is not None and share > 0:
        await credit_service.add_credits(
            session,
            account_id=publisher,
            amount=share,
            kind="revenue_share",
            reference=public_id,
            description=f"Revenue share: {public_id} ({business_name}) revealed by another account",
            now=now,
            settings=settings,
        )
    metrics.observe_reveal("revealed", price)
    if notify:
        await webhook_outbox.enqueue_event(
            session,
            account_id=account_id,
            event_type=webhook_events.CONTACT_REVEALED,
            data={
                "batch_id": batch_id,
                "contact_id": public_id,
                "status": "revealed",
                "credits_charged": price,
                "contact": record.model_dump(mode="json"),
            },
            now=now,
        )


async def _earlier_reveal(session: AsyncSession, account_id: str, contact_id: int) -> datetime:
    """When the account revealed the contact: a request that committed while this one ran did (D10)."""
    found = await session.scalar(
        select(_reveals.c.created_at).where(_reveals.c.account_id == account_id, _reveals.c.contact_id == contact_id)
    )
    assert found is not None
    return cast(datetime, found)


async def charge_for(
    session: AsyncSession, reveal_id: int, charge: dict[str, Any], settings: Settings
) -> credit_service.Balance:
    """The debit of a reveal row just written (none for a reveal that sells nothing), and what it
    took from free credits noted on the row (a refund gives that part back as free credits)."""
    account_id, price, now = charge["account_id"], charge["price"], charge["now"]
    if price <= 0:
        return await credit_service.refresh_free_credits(session, account_id=account_id, now=now, settings=settings)
    debit = await credit_service.spend(
        session,
        account_id=account_id,
        amount=price,
        kind=charge["kind"],
        reference=charge["reference"],
        description=charge["description"],
        now=now,
        settings=settings,
    )
    if debit.from_free > 0:
        await session.execute(update(_reveals).where(_reveals.c.id == reveal_id).values(free_spent=debit.from_free))
    return debit


async def _charge_in_transaction(
    session: AsyncSession,
    row: Any,
    sources: list[SourceRef],
    charge: dict[str, Any],
    publisher: str | None,
    settings: Settings,
    dnc: PhoneDnc | None,
) -> RevealOutcome | None:
    """A new reveal in ``session``'s transaction: the reveal row, the debit and its ledger entry, the
    publisher's share, the outbox rows. None when a concurrent twin revealed it first (D10)."""
    account_id, price, now, public_id = charge["account_id"], charge["price"], charge["now"], charge["reference"]
    if publisher is not None:
        # Two balances change: locks in id order first (PostgreSQL), as every such transaction does.
        await lock_accounts(session, [account_id, publisher])
    connection = await session.connection()
    inserted = (await connection.execute(_INSERT_REVEAL[connection.dialect.name], charge)).scalar()
    if inserted is None:
        return None
    balance = await charge_for(session, inserted, charge, settings)
    record = revealed_record(row, sources, revealed_at=now, charged=price, remaining=balance.total, phone_dnc=dnc)
    await settle(
        session,
        account_id=account_id,
        publisher=publisher,
        price=price,
        public_id=public_id,
        business_name=row.business_name,
        record=record,
        notify=row.has_endpoint,
        batch_id=None,
        now=now,
        settings=settings,
    )
    return RevealOutcome(record, price, balance.total, already_revealed=False)
