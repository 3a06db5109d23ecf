"""`client.signals` against the real application, in process: query, iterate, purchase, batch."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import pytest
from tests.factories import Factory

import vpx_client
from conftest import ingest
from vpx_client.models import SignalBatchQuery, SignalView

HOT = {"budget": "$40k", "timeline": "Q1", "vendor_evaluation": "comparing three vendors"}


def event(contact_id: str, topic: str, **fields: Any) -> dict[str, Any]:
    return {
        "category": "switching_intent",
        "industry": "solar",
        "observed_at": "2026-11-20T10:00:00Z",
        "contact_id": contact_id,
        "topic": topic,
        "evidence": {"interest": "panels"},
        **fields,
    }


async def solar_contact(factory: Factory) -> str:
    return await factory.contact(
        business_name=f"Sunny Roofs {uuid.uuid4().hex[:6]}", city="Boulder", state="CO", industry="solar",
        phone=f"+1303555{uuid.uuid4().int % 10_000:04d}",
    )  # fmt: skip


async def test_iterate_follows_cursors_newest_first_without_repeats(factory: Factory, connect, admin) -> None:
    account = await factory.account()
    contact = await solar_contact(factory)
    topic = f"iterate-{uuid.uuid4().hex[:8]}"
    ids = await ingest(admin, [event(contact, topic) for _ in range(7)])
    client = connect(account.keys["ro"])

    walked = [s async for s in client.signals.iterate(industry="solar", state="CO", page_size=3) if s.topic == topic]

    assert [s.id for s in walked] == list(reversed(ids))
    assert all(isinstance(s, SignalView) and s.meta.status_code == 200 for s in walked)


async def test_list_get_and_batch(factory: Factory, connect, admin) -> None:
    account = await factory.account()
    contact = await solar_contact(factory)
    [signal_id] = await ingest(admin, [event(contact, "one", evidence=HOT)])
    client = connect(account.keys["ro"])

    page = await client.signals.list(industry="solar", intent_level="hot", limit=1)
    one = await client.signals.get(signal_id)
    batch = await client.signals.batch(
        [SignalBatchQuery(industry="solar", state="CO"), {"industry": "dental"}], limit_per_query=2
    )

    assert page.limit == 1 and [s.intent_level for s in page.signals] == ["hot"]
    assert one.id == signal_id and one.intent_level == "hot" and one.reveal_cost == Decimal(6)
    assert [len(r.signals) <= 2 for r in batch.results] == [True, True]
    assert batch.results[0].signals[0].industry == "solar"


async def test_purchase_charges_the_tier_price_once(factory: Factory, connect, admin) -> None:
    account = await factory.account()
    contact = await solar_contact(factory)
    [signal_id] = await ingest(admin, [event(contact, "buy me", evidence=HOT)])
    client = connect(account.keys["live"])

    bought = await client.signals.purchase(signal_id)
    again = await client.signals.purchase(signal_id)

    assert bought.contact.id == contact and bought.signal.id == signal_id
    assert bought.meta.credits_charged == Decimal(6) and bought.meta.credits_remaining == Decimal(19)
    assert again.meta.credits_charged == Decimal(0)
    assert bought.meta.idempotency_key and bought.meta.idempotency_key != again.meta.idempotency_key


async def test_an_fcra_blocked_signal_is_never_for_sale(factory: Factory, connect, admin) -> None:
    account = await factory.account()
    contact = await solar_contact(factory)
    [signal_id] = await ingest(admin, [event(contact, "blocked", evidence={"credit_score": 700})])
    client = connect(account.keys["live"])

    with pytest.raises(vpx_client.FcraBlocked) as refused:
        await client.signals.purchase(signal_id)

    assert isinstance(refused.value, vpx_client.UnavailableForLegalReasons)
    assert refused.value.status == 451 and refused.value.request_id
    assert refused.value.meta.retries == ()  # a refusal is not retried
