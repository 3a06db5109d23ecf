"""Batch reveal (D16): every id through ``contacts.service.reveal_contact`` (suppression, price,
charge once, revenue share), each in a savepoint so that one refused item changes nothing but its own
result, and charges stay exact when the credits run out part-way.

Without a webhook the batch runs in the request's transaction. With one, the request only records the
batch; the worker reveals its items one transaction at a time, each committing with its
``contact.revealed`` delivery, so a crash resumes where it stopped and charges nothing twice.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import insert, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.batches.prefetch import RevealPrefetch, prefetch_for_reveal
from vpx.clock import Clock
from vpx.compliance.dnc import service as dnc_service
from vpx.config import Settings
from vpx.contacts import service as contact_service
from vpx.contacts.schemas import RevealedContact
from vpx.db import Database
from vpx.errors import InsufficientCredits, NotFound, ProblemError, Suppressed
from vpx.ids import new_id, parse_number_id
from vpx.models import BatchReveal, BatchRevealItem, Contact
from vpx.outbound.resolver import Resolver
from vpx.secrets import SecretBox
from vpx.webhooks import events, signing
from vpx.webhooks import outbox as webhook_outbox
from vpx.webhooks import service as webhook_service

log = logging.getLogger("vpx.batches")

ZERO = Decimal(0)
REFUSALS: dict[type[ProblemError], str] = {
    NotFound: "not_found",
    Suppressed: "suppressed",
    InsufficientCredits: "insufficient_credits",
}


@dataclass(frozen=True)
class ItemResult:
    contact_id: str
    status: str
    credits_charged: Decimal
    contact: RevealedContact | None
    remaining: Decimal | None


def distinct_ids(contact_ids: list[str]) -> list[str]:
    return list(dict.fromkeys(contact_ids))


async def _not_callable(
    session: AsyncSession, contact_id: str, *, now: datetime, prefetch: RevealPrefetch | None
) -> bool:
    """Whether a batch leaving out do-not-call phones leaves this contact out: one the reveal would
    sell (found, active, on no suppression entry) whose phone may not be called. Any other contact
    goes on to the reveal, which answers for it (not found, suppressed)."""
    number = parse_number_id("ct", contact_id)
    if number is None:
        return False
    if prefetch is not None:
        contact = prefetch.contacts.get(number)
        if contact is None or contact.status != "active" or number in prefetch.suppressions:
            return False
        states = prefetch.phone_dnc
    else:
        contact = await session.get(Contact, number)
        if contact is None or contact.status != "active" or contact.suppressed:
            return False
        states = await dnc_service.lookup(session, [contact.phone], today=now.date())
    return not dnc_service.callable_phone(states.get(contact.phone) if contact.phone else None)


async def reveal_one(
    session: AsyncSession,
    *,
    account_id: str,
    contact_id: str,
    now: datetime,
    settings: Settings,
    batch_id: str,
    accounts_locked: bool,
    prefetch: RevealPrefetch | None = None,
    exclude_dnc: bool = False,
) -> ItemResult:
    """One item under every reveal rule. A refusal changes nothing but its suppression audit entry:
    with the account rows locked (or a prefetch) ``reveal_contact`` writes nothing before it can
    refuse; otherwise the item runs in a savepoint. ``exclude_dnc``: a contact whose phone may not be
    called is left out (``do_not_call``), charged nothing."""
    if exclude_dnc and await _not_callable(session, contact_id, now=now, prefetch=prefetch):
        return ItemResult(contact_id, "do_not_call", ZERO, None, None)
    if accounts_locked or prefetch is not None:
        try:
            outcome = await contact_service.reveal_contact(
                session,
                account_id=account_id,
                contact_id=contact_id,
                channel="batch",
                ledger_kind="reveal",
                now=now,
                settings=settings,
                batch_id=batch_id,
                accounts_locked=True,
                prefetch=prefetch,
            )
        except (NotFound, Suppressed, InsufficientCredits) as exc:
            return ItemResult(contact_id, REFUSALS[type(exc)], ZERO, None, None)
        status = "already_revealed" if outcome.already_revealed else "revealed"
        return ItemResult(contact_id, status, outcome.charged, outcome.contact, outcome.remaining)
    savepoint = await session.begin_nested()
    try:
        outcome = await contact_service.reveal_contact(
            session,
            account_id=account_id,
            contact_id=contact_id,
            channel="batch",
            ledger_kind="reveal",
            now=now,
            settings=settings,
            accounts_locked=accounts_locked,
            batch_id=batch_id,
        )
    except (NotFound, Suppressed, InsufficientCredits) as exc:
        if isinstance(exc, Suppressed):
            await savepoint.commit()
        else:
            await savepoint.rollback()
        return ItemResult(contact_id, REFUSALS[type(exc)], ZERO, None, None)
    except BaseException:
        await savepoint.rollback()
        raise
    await savepoint.commit()
    status = "already_revealed" if outcome.already_revealed else "revealed"
    return ItemResult(contact_id, status, outcome.charged, outcome.contact, outcome.remaining)


async def _publishers(session: AsyncSession, contact_ids: list[str]) -> list[str]:
    numbers = [n for n in (parse_number_id("ct", c) for c in contact_ids) if n is not None]
    if not numbers:
        return []
    rows = await session.scalars(
        select(Contact.publisher_account_id).where(Contact.id.in_(numbers), Contact.publisher_account_id.is_not(None))
    )
    return [r for r in rows if r is not None]


def _new_batch(
    account_id: str,
    ids: list[str],
    *,
    status: str,
    now: datetime,
    webhook_url: str | None,
    secret_sealed: str | None,
    exclude_dnc: bool = False,
) -> BatchReveal:
    return BatchReveal(
        id=new_id("brv"),
        account_id=account_id,
        status=status,
        exclude_dnc=exclude_dnc,
        webhook_url=webhook_url,
        webhook_secret_sealed=secret_sealed,
        total=len(ids),
        created_at=now,
        completed_at=now if status == "completed" else None,
    )


async def reveal_batch_now(
    session: AsyncSession,
    *,
    account_id: str,
    contact_ids: list[str],
    now: datetime,
    settings: Settings,
    exclude_dnc: bool = False,
) -> tuple[BatchReveal, list[ItemResult]]:
    """Reveals every distinct id in the request's transaction; one result per id, in order."""
    ids = distinct_ids(contact_ids)
    # Every account row this transaction may change, locked in id order before anything is written
    # (D17: no deadlock with another batch or reveal that needs the same rows).
    await contact_service.lock_accounts(session, [account_id, *await _publishers(session, ids)])
    prefetch = await prefetch_for_reveal(session, account_id=account_id, contact_ids=ids, now=now, settings=settings)
    batch = _new_batch(
        account_id, ids, status="completed", now=now, webhook_url=None, secret_sealed=None, exclude_dnc=exclude_dnc
    )
    session.add(batch)
    results = []
    # The reveal and ledger rows wait and go in together at the end: nothing in the loop reads them
    # back (the prefetch answers charge-once), and a round trip per row is most of a batch's time.
    with session.no_autoflush:
        for contact_id in ids:
            results.append(
                await reveal_one(
                    session,
                    account_id=account_id,
                    contact_id=contact_id,
                    now=now,
                    settings=settings,
                    batch_id=batch.id,
                    accounts_locked=True,
                    prefetch=prefetch,
                    exclude_dnc=exclude_dnc,
                )
            )
    await session.flush()
    await prefetch.write(session)
    await session.execute(
        insert(BatchRevealItem),
        [
            {
                "batch_id": batch.id,
                "position": position,
                "contact_id": r.contact_id,
                "status": r.status,
                "credits_charged": r.credits_charged,
                "completed_at": now,
            }
            for position, r in enumerate(results)
        ],
    )
    await webhook_outbox.enqueue_event(
        session,
        account_id=account_id,
        event_type=events.BATCH_REVEAL_COMPLETED,
        data=completed_data(batch.id, [(r.contact_id, r.status, r.credits_charged) for r in results]),
        now=now,
    )
    return batch, results


def completed_data(batch_id: str, results: list[tuple[str, str, Decimal]]) -> dict[str, Any]:
    """The ``batch_reveal.completed`` payload's data."""
    return {
        "batch_id": batch_id,
        "total": len(results),
        "counts": dict(Counter(status for _, status, _ in results)),
        "credits_charged": sum((charged for _, _, charged in results), ZERO),
        "results": [
            {"contact_id": contact_id, "status": status, "credits_charged": charged}
            for contact_id, status, charged in results
        ],
    }


async def start_batch(
    session: AsyncSession,
    *,
    account_id: str,
    contact_ids: list[str],
    webhook_url: str,
    now: datetime,
    settings: Settings,
    resolver: Resolver,
    box: SecretBox,
    exclude_dnc: bool = False,
) -> tuple[BatchReveal, str]:
    """Records a batch for the worker; returns it and its webhook secret (shown once, kept sealed). The
    URL must pass the SSRF guard now (and again at delivery)."""
    url = await webhook_service.accepted_url(webhook_url, settings=settings, resolver=resolver, field="webhook_url")
    ids = distinct_ids(contact_ids)
    secret = signing.new_secret()
    batch = _new_batch(
        account_id,
        ids,
        status="processing",
        now=now,
        webhook_url=url,
        secret_sealed=box.seal(secret),
        exclude_dnc=exclude_dnc,
    )
    session.add(batch)
    session.add_all(
        BatchRevealItem(batch_id=batch.id, position=p, contact_id=c, status="pending", credits_charged=ZERO)
        for p, c in enumerate(ids)
    )
    await session.flush()
    await webhook_outbox.wake_workers_on_commit(session)
    return batch, secret


async def get_batch(
    session: AsyncSession, *, account_id: str, batch_id: str
) -> tuple[BatchReveal, list[BatchRevealItem]]:
    """The account's batch and its items; 404 for unknown ids and for batches of other accounts."""
    batch = await session.get(BatchReveal, batch_id) if len(batch_id) <= 32 else None
    if batch is None or batch.account_id != account_id:
        raise NotFound(f"No batch reveal {batch_id}.")
    items = await session.scalars(
        select(BatchRevealItem).where(BatchRevealItem.batch_id == batch.id).order_by(BatchRevealItem.position)
    )
    return batch, list(items)


async def claim_batch(database: Database, *, now: datetime, lease: timedelta) -> str | None:
    """Leases one batch that still has items to reveal (SKIP LOCKED on PostgreSQL)."""
    async with database.write_sessions() as session, session.begin():
        query = (
            select(BatchReveal.id)
            .where(
                BatchReveal.status == "processing",
                or_(BatchReveal.leased_until.is_(None), BatchReveal.leased_until <= now),
            )
            .order_by(BatchReveal.created_at)
            .limit(1)
        )
        if not database.is_sqlite:
            query = query.with_for_update(skip_locked=True)
        batch_id = await session.scalar(query)
        if batch_id is not None:
            await session.execute(
                update(BatchReveal).where(BatchReveal.id == batch_id).values(leased_until=now + lease)
            )
        return batch_id


async def run_due_batch(database: Database, *, settings: Settings, clock: Clock, resolver: Resolver) -> int:
    """Reveals the items of one due batch, each in its own transaction with its delivery, then
    completes it. Returns the number of items revealed this round."""
    # The worker's lease (VPX_WORKER_LEASE_SECONDS): a worker that dies mid-batch hands it on that soon.
    batch_id = await claim_batch(database, now=clock.now(), lease=timedelta(seconds=settings.worker_lease_seconds))
    if batch_id is None:
        return 0
    done = 0
    while True:
        async with database.write_sessions() as session, session.begin():
            progressed = await _next_item(session, batch_id=batch_id, now=clock.now(), settings=settings)
        if not progressed:
            return done + 1
        done += 1


async def _next_item(session: AsyncSession, *, batch_id: str, now: datetime, settings: Settings) -> bool:
    """Reveals the batch's next pending item, or completes the batch; False when nothing is left."""
    batch = await session.get(BatchReveal, batch_id, with_for_update=True)
    if batch is None or batch.status != "processing":
        return False
    batch.leased_until = now + timedelta(seconds=settings.worker_lease_seconds)
    item = await session.scalar(
        select(BatchRevealItem)
        .where(BatchRevealItem.batch_id == batch_id, BatchRevealItem.status == "pending")
        .order_by(BatchRevealItem.position)
        .limit(1)
    )
    assert batch.webhook_url is not None and batch.webhook_secret_sealed is not None
    if item is None:
        items = await session.scalars(
            select(BatchRevealItem).where(BatchRevealItem.batch_id == batch_id).order_by(BatchRevealItem.position)
        )
        summary = completed_data(batch_id, [(i.contact_id, i.status, i.credits_charged) for i in items])
        batch.status, batch.completed_at, batch.leased_until = "completed", now, None
        await _deliver(session, batch, events.BATCH_REVEAL_COMPLETED, summary, now)
        await webhook_outbox.enqueue_event(
            session, account_id=batch.account_id, event_type=events.BATCH_REVEAL_COMPLETED, data=summary, now=now
        )
        return False
    try:
        result = await reveal_one(
            session,
            account_id=batch.account_id,
            contact_id=item.contact_id,
            now=now,
            settings=settings,
            batch_id=batch_id,
            accounts_locked=False,
            exclude_dnc=batch.exclude_dnc,
        )
    except ProblemError as exc:  # any other refusal is this item's result, never the batch's end
        log.warning("batch item refused", extra={"batch_id": batch_id, "error": exc.detail})
        result = ItemResult(item.contact_id, "not_found", ZERO, None, None)
    item.status, item.credits_charged, item.completed_at = result.status, result.credits_charged, now
    data: dict[str, Any] = {
        "batch_id": batch_id,
        "contact_id": result.contact_id,
        "status": result.status,
        "credits_charged": result.credits_charged,
    }
    if result.contact is not None:
        data["contact"] = result.contact.model_dump(mode="json")
    await _deliver(session, batch, events.CONTACT_REVEALED, data, now)
    return True


async def _deliver(
    session: AsyncSession, batch: BatchReveal, event_type: str, data: dict[str, Any], now: datetime
) -> None:
    assert batch.webhook_url is not None and batch.webhook_secret_sealed is not None
    await webhook_outbox.enqueue_to_url(
        session,
        account_id=batch.account_id,
        url=batch.webhook_url,
        secret_sealed=batch.webhook_secret_sealed,
        event_type=event_type,
        data=data,
        now=now,
        batch_id=batch.id,
    )
