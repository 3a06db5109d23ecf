"""What else happens when signals are ingested, inside the ingest transaction.

Every hook runs after the new signals are flushed (only newly inserted ones, never duplicates) and
before the commit, so its writes (webhook outbox rows, auto-buy purchases) commit with the signals or
not at all. Each capability adds its own line to ``INGEST_HOOKS``; the list is explicit so a reader
sees everything an ingest sets off. The hooks know only ``vpx.signals.hook_context``, the shape of a
hook and what it is handed, never this list.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from vpx.autobuy import matching as autobuy_matching
from vpx.signals import stream as signal_stream
from vpx.signals import webhooks as signal_webhooks
from vpx.signals.hook_context import HookContext, IngestHook
from vpx.signals.records import SignalRecord

INGEST_HOOKS: tuple[IngestHook, ...] = (
    # signal.created webhook events (D29), through the outbox (signals-core).
    signal_webhooks.enqueue_signal_created,
    # open signal streams everywhere learn of the new signals at commit (D23).
    signal_stream.announce_signals,
    # auto-buy purchases for matching rules (D24), after the contacts' prices are raised.
    autobuy_matching.buy_matching_contacts,
)


async def run_ingest_hooks(session: AsyncSession, signals: Sequence[SignalRecord], context: HookContext) -> None:
    if not signals:
        return
    for hook in INGEST_HOOKS:
        await hook(session, signals, context)
