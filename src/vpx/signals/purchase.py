"""Purchasing a signal (D9): a reveal of its contact through the one reveal path, so suppression
(D15), charge once (D10), the ledger (D11) and revenue share (D17) hold exactly as for a reveal."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from vpx.config import Settings
from vpx.contacts import service as contact_service
from vpx.errors import NotFound, SignalFcraBlocked
from vpx.signals import service as signal_service
from vpx.signals.schemas import SignalPurchase


@dataclass(frozen=True)
class PurchaseOutcome:
    body: SignalPurchase
    charged: Decimal
    remaining: Decimal


async def purchase_signal(
    session: AsyncSession, *, account_id: str, signal_id: str, now: datetime, settings: Settings
) -> PurchaseOutcome:
    """Reveals the signal's contact to the account. fcra_blocked → 451 before anything else, nothing
    charged and nothing about the contact said (D19); a signal without a contact → 404."""
    signal = await signal_service.load_signal(session, signal_id)
    if signal.source_status == "fcra_blocked":
        # D19, D21: blocked at ingestion, permanently; never purchasable.
        raise SignalFcraBlocked(
            f"Signal {signal_id} is fcra_blocked: its evidence involves information the FCRA regulates "
            "(credit, employment, rental or eviction history, and the like), so it can never be purchased; "
            "nothing was charged."
        )
    if signal.contact_id is None:
        raise NotFound(f"Signal {signal_id} has no contact to purchase.")
    outcome = await contact_service.reveal_contact(
        session,
        account_id=account_id,
        contact_id=contact_service.contact_public_id(signal.contact_id),
        channel="purchase",
        ledger_kind="reveal",
        now=now,
        settings=settings,
    )
    view = (await signal_service.views_of(session, [signal], settings))[0]
    return PurchaseOutcome(
        body=SignalPurchase(signal=view, contact=outcome.contact), charged=outcome.charged, remaining=outcome.remaining
    )
