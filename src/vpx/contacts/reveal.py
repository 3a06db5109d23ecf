"""One contact revealed to one account: the rules, in one place, whoever holds the transaction (D9,
D10, D11, D15, D17, D29). The API's reveal endpoints, signal purchases, the dashboard, auto-buy and
batch reveals all come through ``reveal_one``.

1. One read (vpx.contacts.reveal_reads): the contact with its sources, this account's earlier
   reveal of it, the first suppression entry that covers it (by id, phone or email), the buyer's
   balance and free month, and whether the account has an active webhook endpoint at all (a batch
   reads all of that once, for every id: its prefetch answers instead).
2. The rules, below: suppression, charge-once, the price.
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
from typing import TYPE_CHECKING, Any

from sqlalchemy import BigInteger, SmallInteger, Table, bindparam, select, text, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from vpx import metrics
from vpx.clock import month_key
from vpx.config import Settings
from vpx.contacts import pricing, reveal_reads
from vpx.contacts.schemas import Address, License, PhoneDnc, RevealedContact, SourceRef
from vpx.credits import service as credit_service
from vpx.db import Database, UtcDateTime
from vpx.deliverability import checks as email_checks
from vpx.errors import NotFound, Suppressed
from vpx.ids import parse_number_id, public_number_id
from vpx.models import Account, Reveal
from vpx.money import QUANTUM, CreditsType
from vpx.suppression import service as suppression_service
from vpx.webhooks import events as webhook_events
from vpx.webhooks import outbox as webhook_outbox

if TYPE_CHECKING:
    from vpx.batches.prefetch import RevealPrefetch

_reveals: Table = Reveal.__table__  # type: ignore[assignment]

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
# A reveal whose charge is already taken (the caller holds the buyer's row): with what it took from
# free credits.
_INSERT_CHARGED_REVEAL = _reveals.insert().values(
    {**_REVEAL_VALUES, "free_spent": bindparam("free_spent", type_=CreditsType())}
)
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
    accounts_locked: bool = False,
    prefetch: RevealPrefetch | None = None,
    batch_id: str | None = None,
) -> RevealOutcome:
    """Reveals a contact to an account, under every rule, in this order (D15, D10, D9, D11, D17): the
    suppression check (451, its audit entry kept), charge-once (a contact the account revealed before
    is shown again, free), the price of the fields it sells, one debit with its ledger entry, and for
    a contact another account contributed, that publisher's revenue share; a new reveal raises
    ``contact.revealed`` (D29) in the same transaction. Suppressed (451), unknown (404) or
    unaffordable (402) reveals charge nothing. ``ledger_description`` replaces the ledger entry's
    default description (auto-buy names its rule there); ``batch_id`` goes into the event.

    Where it reads and how it charges depends on what the caller holds:

    - ``standalone``: the caller writes nothing else in ``session``'s transaction, so the reads run
      outside it (on SQLite the write lock is then held for the writes only) and on PostgreSQL a
      plain charge is one autocommitted statement.
    - ``accounts_locked``: the caller holds, through ``lock_accounts``, the rows of the buyer and of
      the contact's publisher; the debit comes before the reveal row, so a refused reveal has written
      nothing but its suppression audit entry.
    - ``prefetch`` (which implies the lock): a batch's look-ups answer the reads, and its held balance
      is charged in memory; the reveal and ledger rows are written with the batch's, at its end.
    - none of them: in the caller's transaction, the reveal row first (a concurrent twin makes it a
      free repeat), then the debit.
    """
    assert standalone is None or not (accounts_locked or prefetch is not None)
    number = parse_number_id("ct", contact_id)
    if number is None:
        raise NotFound(f"No contact {contact_id}.")
    public_id = public_number_id("ct", number)
    if prefetch is not None:
        found = reveal_reads.prefetched(prefetch, number)
    else:
        params = {"contact_id": number, "account_id": account_id, "public_id": public_id}
        found = await reveal_reads.read(session, params, standalone=standalone, accounts_locked=accounts_locked)
    if found is None:
        raise NotFound(f"No contact {contact_id}.")
    row, sources, hit = found.row, found.sources, found.suppression
    if hit is not None:
        await suppression_service.record_hit(
            session, account_id=account_id, contact_id=number, suppression_id=hit.id, now=now
        )
        metrics.observe_reveal("suppressed", Decimal(0))
        raise Suppressed(
            suppression_service.refusal(
                public_id, hit.reason, revealed=found.revealed_at is not None, outcome="nothing was charged"
            )
        )
    if prefetch is not None:
        dnc = prefetch.phone_dnc.get(row.phone) if row.phone else None
    else:
        dnc = await reveal_reads.phone_dnc_of(session, row, now)

    revealed_at = found.revealed_at
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
                charged, revealed_at = None, await reveal_reads.earlier_reveal(session, account_id, number)
            if charged is not None:
                remaining = charged.free_credits + charged.paid_credits
                metrics.observe_reveal("revealed", price)
                record = revealed_record(
                    row, sources, revealed_at=now, charged=price, remaining=remaining, phone_dnc=dnc
                )
                return RevealOutcome(record, price, remaining, already_revealed=False)
        if revealed_at is None:
            balance = (
                _charge_held(prefetch, charge)
                if prefetch is not None
                else await _charge_in_transaction(session, charge, publisher, settings, accounts_locked=accounts_locked)
            )
            if balance is None:  # a concurrent twin revealed it first (D10)
                revealed_at = await reveal_reads.earlier_reveal(session, account_id, number)
            else:
                record = revealed_record(
                    row, sources, revealed_at=now, charged=price, remaining=balance.total, phone_dnc=dnc
                )
                await settle(
                    session,
                    account_id=account_id,
                    publisher=publisher,
                    price=price,
                    public_id=public_id,
                    business_name=row.business_name,
                    record=record,
                    notify=found.notify,
                    batch_id=batch_id,
                    now=now,
                    settings=settings,
                )
                return RevealOutcome(record, price, balance.total, already_revealed=False)

    if prefetch is not None:
        remaining = prefetch.balance.free + prefetch.balance.paid
    elif row.free_period == month_key(now):
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


async def _take_price(session: AsyncSession, charge: dict[str, Any], settings: Settings) -> credit_service.Balance:
    """The reveal's price taken from the balance, free credits first, with its ledger entry; a reveal
    that sells nothing takes nothing (the balance as it stands, its free month started)."""
    account_id, price, now = charge["account_id"], charge["price"], charge["now"]
    if price <= 0:
        return await credit_service.refresh_free_credits(session, account_id=account_id, now=now, settings=settings)
    return await credit_service.spend(
        session,
        account_id=account_id,
        amount=price,
        kind=charge["kind"],
        reference=charge["reference"],
        description=charge["description"],
        now=now,
        settings=settings,
    )


def _free_spent(balance: credit_service.Balance) -> Decimal:
    """What a debit took from free credits, noted on the reveal row (a refund gives that part back as
    free credits)."""
    return balance.from_free if isinstance(balance, credit_service.Debit) else Decimal(0)


async def _charge_in_transaction(
    session: AsyncSession,
    charge: dict[str, Any],
    publisher: str | None,
    settings: Settings,
    *,
    accounts_locked: bool,
) -> credit_service.Balance | None:
    """A new reveal's row, debit and ledger entry in ``session``'s transaction; the balance after it.
    None when a concurrent twin revealed it first (D10)."""
    connection = await session.connection()
    if accounts_locked:
        # The caller holds the buyer's row, so no twin can reveal for it meanwhile: charged first (a
        # short balance raises with nothing written), then the row.
        balance = await _take_price(session, charge, settings)
        await connection.execute(_INSERT_CHARGED_REVEAL, {**charge, "free_spent": _free_spent(balance)})
        return balance
    if publisher is not None:
        # Two balances change: locks in id order first (PostgreSQL), as every such transaction does.
        await lock_accounts(session, [charge["account_id"], publisher])
    inserted = (await connection.execute(_INSERT_REVEAL[connection.dialect.name], charge)).scalar()
    if inserted is None:
        return None
    balance = await _take_price(session, charge, settings)
    if _free_spent(balance) > 0:
        await session.execute(update(_reveals).where(_reveals.c.id == inserted).values(free_spent=_free_spent(balance)))
    return balance


def _charge_held(prefetch: RevealPrefetch, charge: dict[str, Any]) -> credit_service.Balance:
    """A batch's new reveal: its held balance charged in memory (a shortfall raises with nothing
    written); the reveal row kept for the batch to write at its end with the others."""
    held, price = prefetch.balance, charge["price"]
    balance = (
        held.spend(price, kind=charge["kind"], reference=charge["reference"], description=charge["description"])
        if price > 0
        else credit_service.Balance(free=held.free, paid=held.paid)
    )
    prefetch.record_reveal(
        Reveal(
            account_id=charge["account_id"],
            contact_id=charge["contact_id"],
            credits_charged=price,
            channel=charge["channel"],
            created_at=charge["now"],
            fields_sold=charge["fields"],
            free_spent=_free_spent(balance),
        )
    )
    return balance
