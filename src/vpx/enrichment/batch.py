"""Batch enrichment (D32, shaped like batch reveal D16): the request records the batch; the worker
enriches its contacts, several at a time, each through the same waterfall as a single enrichment,
records each contact's result as it completes, then announces `enrichment.completed` to the batch's
one-off URL (signed with the secret shown once in the 202, kept sealed) and to the account's
subscriptions. A worker that dies mid-batch leaves the batch leased; after the lease another picks it
up and enriches the contacts still pending (those done are not asked again, and the providers'
answers are cached)."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.clock import Clock
from vpx.config import Settings
from vpx.db import Database
from vpx.enrichment import service
from vpx.enrichment.schemas import BatchEnrichItem, BatchEnrichProgress
from vpx.enrichment.waterfall import Waterfall
from vpx.errors import NotFound, ProblemError, Suppressed
from vpx.ids import new_id
from vpx.models import EnrichmentBatch, EnrichmentBatchItem
from vpx.outbound.resolver import Resolver
from vpx.secrets import SecretBox
from vpx.webhooks import events, signing
from vpx.webhooks import outbox as webhook_outbox
from vpx.webhooks import service as webhook_service

log = logging.getLogger("vpx.enrichment")
LEASE = timedelta(seconds=120)
# Contacts of one batch enriched at once (their provider calls overlap).
CONCURRENCY = 8


async def start_batch(
    session: AsyncSession,
    *,
    account_id: str,
    contact_ids: list[str],
    providers: list[str] | None,
    fields: Sequence[str] | None,
    webhook_url: str | None,
    box: SecretBox,
    settings: Settings,
    resolver: Resolver,
    now: datetime,
) -> tuple[EnrichmentBatch, str | None]:
    """Records a batch for the worker; returns it and the webhook secret (shown once)."""
    for name in providers or []:
        service.check_provider(name)
    url = None
    if webhook_url is not None:
        url = await webhook_service.accepted_url(webhook_url, settings=settings, resolver=resolver, field="webhook_url")
    secret = signing.new_secret() if url is not None else None
    ids = list(dict.fromkeys(contact_ids))
    batch = EnrichmentBatch(
        id=new_id("ben"),
        account_id=account_id,
        status="processing",
        providers=providers,
        fields=list(fields) if fields is not None else None,
        webhook_url=url,
        webhook_secret_sealed=box.seal(secret) if secret is not None else None,
        total=len(ids),
        created_at=now,
    )
    session.add(batch)
    session.add_all(
        EnrichmentBatchItem(batch_id=batch.id, position=p, contact_id=c, status="pending") for p, c in enumerate(ids)
    )
    await session.flush()
    await webhook_outbox.wake_workers_on_commit(session)
    return batch, secret


async def progress(session: AsyncSession, *, account_id: str, batch_id: str) -> BatchEnrichProgress:
    batch = await session.get(EnrichmentBatch, batch_id) if len(batch_id) <= 32 else None
    if batch is None or batch.account_id != account_id:
        raise NotFound(f"No batch enrichment {batch_id}.")
    items = list(
        await session.scalars(
            select(EnrichmentBatchItem)
            .where(EnrichmentBatchItem.batch_id == batch.id)
            .order_by(EnrichmentBatchItem.position)
        )
    )
    return BatchEnrichProgress(
        batch_id=batch.id,
        status="completed" if batch.status == "completed" else "processing",
        total=batch.total,
        done=sum(i.status != "pending" for i in items),
        created_at=batch.created_at,
        completed_at=batch.completed_at,
        items=[
            BatchEnrichItem(
                contact_id=i.contact_id,
                status=i.status,
                found=(i.result or {}).get("found", []),
                attempts=(i.result or {}).get("attempts", []),
            )
            for i in items
        ],
    )


async def claim(database: Database, *, now: datetime) -> str | None:
    """Leases one batch with contacts still to enrich (SKIP LOCKED on PostgreSQL)."""
    async with database.write_sessions() as session, session.begin():
        query = (
            select(EnrichmentBatch.id)
            .where(
                EnrichmentBatch.status == "processing",
                or_(EnrichmentBatch.leased_until.is_(None), EnrichmentBatch.leased_until <= now),
            )
            .order_by(EnrichmentBatch.created_at)
            .limit(1)
        )
        if not database.is_sqlite:
            query = query.with_for_update(skip_locked=True)
        batch_id = await session.scalar(query)
        if batch_id is not None:
            await session.execute(
                update(EnrichmentBatch).where(EnrichmentBatch.id == batch_id).values(leased_until=now + LEASE)
            )
        return batch_id


async def run_due_batch(database: Database, *, waterfall: Waterfall, box: SecretBox, clock: Clock) -> int:
    """Enriches the pending contacts of one due batch, then completes it. Returns contacts done."""
    batch_id = await claim(database, now=clock.now())
    if batch_id is None:
        return 0
    async with database.read_sessions() as session:
        batch = await session.get(EnrichmentBatch, batch_id)
        assert batch is not None
        pending = list(
            await session.scalars(
                select(EnrichmentBatchItem)
                .where(EnrichmentBatchItem.batch_id == batch_id, EnrichmentBatchItem.status == "pending")
                .order_by(EnrichmentBatchItem.position)
            )
        )
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(item: EnrichmentBatchItem) -> None:
        async with gate:
            status, result = await _enrich_item(database, waterfall, box, batch, item.contact_id, clock)
            async with database.write_sessions() as session, session.begin():
                await session.execute(
                    update(EnrichmentBatchItem)
                    .where(EnrichmentBatchItem.id == item.id)
                    .values(status=status, result=result, completed_at=clock.now())
                )
                await session.execute(
                    update(EnrichmentBatch)
                    .where(EnrichmentBatch.id == batch_id)
                    .values(leased_until=clock.now() + LEASE)
                )

    await asyncio.gather(*(one(item) for item in pending))
    await _complete(database, batch_id, clock.now())
    return len(pending) + 1


async def _enrich_item(
    database: Database, waterfall: Waterfall, box: SecretBox, batch: EnrichmentBatch, contact_id: str, clock: Clock
) -> tuple[str, dict[str, Any]]:
    try:
        result = await service.enrich_contact(
            database,
            waterfall,
            box,
            account_id=batch.account_id,
            public_id=contact_id,
            providers=batch.providers,
            fields=batch.fields,
            refresh=False,
            dry_run=False,
            now=clock.now(),
        )
    except NotFound:
        return "unknown_contact", {}
    except Suppressed:
        return "suppressed", {}
    except ProblemError as exc:
        return "failed", {"error": exc.detail}
    except Exception:  # one contact's failure is its own result, never the batch's end
        log.exception("batch enrichment item failed", extra={"batch_id": batch.id})
        return "failed", {}
    found = sorted({f for a in result.attempts for f in a.found})
    attempts = [a.model_dump(mode="json") for a in result.attempts]
    return ("enriched" if found else "not_found"), {"found": found, "attempts": attempts}


async def _complete(database: Database, batch_id: str, now: datetime) -> None:
    async with database.write_sessions() as session, session.begin():
        batch = await session.get(EnrichmentBatch, batch_id, with_for_update=True)
        if batch is None or batch.status != "processing":
            return
        items = list(
            await session.scalars(
                select(EnrichmentBatchItem)
                .where(EnrichmentBatchItem.batch_id == batch_id)
                .order_by(EnrichmentBatchItem.position)
            )
        )
        if any(i.status == "pending" for i in items):
            return  # another round (after a crash mid-batch) finishes it
        batch.status, batch.completed_at, batch.leased_until = "completed", now, None
        data = {
            "batch_id": batch.id,
            "total": batch.total,
            "counts": dict(Counter(i.status for i in items)),
            "results": [
                {"contact_id": i.contact_id, "status": i.status, "found": (i.result or {}).get("found", [])}
                for i in items
            ],
        }
        if batch.webhook_url is not None and batch.webhook_secret_sealed is not None:
            await webhook_outbox.enqueue_to_url(
                session,
                account_id=batch.account_id,
                url=batch.webhook_url,
                secret_sealed=batch.webhook_secret_sealed,
                event_type=events.ENRICHMENT_COMPLETED,
                data=data,
                now=now,
                batch_id=None,
            )
        await webhook_outbox.enqueue_event(
            session, account_id=batch.account_id, event_type=events.ENRICHMENT_COMPLETED, data=data, now=now
        )
