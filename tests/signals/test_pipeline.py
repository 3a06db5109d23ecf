"""The ingestion pipeline on both databases: linking, creating, idempotent re-ingest, commit order,
the contact's price tier (D9) and FCRA blocking (D21)."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.factories import Factory
from tests.signals.support import event, ingest
from vpx.models import Contact, Signal
from vpx.signals.events import BusinessRef

pytestmark = pytest.mark.asyncio


async def _signals(app: FastAPI) -> list[Signal]:
    async with app.state.database.read_sessions() as session:
        return list(await session.scalars(select(Signal).order_by(Signal.sequence)))


async def _contact(app: FastAPI, public_id: str) -> Contact:
    async with app.state.database.read_sessions() as session:
        contact = await session.get(Contact, int(public_id.removeprefix("ct_")))
        assert contact is not None
        return contact


async def test_event_links_to_the_contact_with_the_same_phone(app: FastAPI, factory: Factory) -> None:
    contact_id = await factory.contact()
    business = BusinessRef(name="ACME PLUMBING", city="Denver", state="co", phone="(303) 555-0100")
    report = await ingest(app, [event(business=business)])
    assert (report.ingested, report.contacts_linked, report.contacts_created) == (1, 1, 0)
    [signal] = await _signals(app)
    assert f"ct_{signal.contact_id}" == contact_id
    assert signal.state == "CO" and signal.city == "Denver"


async def test_event_links_by_name_city_and_state(app: FastAPI, factory: Factory) -> None:
    contact_id = await factory.contact(phone=None)
    business = BusinessRef(name="Acme Plumbing, L.L.C.", city="DENVER", state="CO")
    report = await ingest(app, [event(business=business)])
    assert report.contacts_linked == 1
    [signal] = await _signals(app)
    assert f"ct_{signal.contact_id}" == contact_id


async def test_unknown_business_becomes_a_contact_from_what_the_source_gives(app: FastAPI) -> None:
    business = BusinessRef(name="Zephyr Solar Co", city="Boulder", state="CO", website="zephyr.example")
    report = await ingest(app, [event(business=business, industry="solar"), event(business=business, topic="x")])
    assert (report.ingested, report.contacts_created, report.contacts_linked) == (2, 1, 1)
    first, second = await _signals(app)
    assert first.contact_id == second.contact_id is not None
    contact = await _contact(app, f"ct_{first.contact_id}")
    assert (contact.business_name, contact.city, contact.state, contact.industry) == (
        "Zephyr Solar Co", "Boulder", "CO", "solar",
    )  # fmt: skip
    assert contact.website == "https://zephyr.example" and contact.phone is None


async def test_reingesting_the_same_record_is_a_no_op(app: FastAPI) -> None:
    events = [event(source="permits:chicago", source_record_id="P-1"), event(evidence={"timeline": "Q1"})]
    first = await ingest(app, events)
    again = await ingest(app, events)
    assert (first.ingested, first.duplicates) == (2, 0)
    assert (again.ingested, again.duplicates) == (0, 2)
    assert len(await _signals(app)) == 2


async def test_sequences_follow_commit_order(app: FastAPI) -> None:
    await ingest(app, [event(source_record_id=f"a{n}") for n in range(5)], batch_size=2)
    await ingest(app, [event(source_record_id=f"b{n}") for n in range(3)])
    assert [s.sequence for s in await _signals(app)] == list(range(1, 9))


async def test_contact_price_tier_is_its_highest_available_signal(app: FastAPI, factory: Factory) -> None:
    contact_id = await factory.contact()
    hot = {"budget": "$20k", "timeline": "Q1", "vendor_evaluation": ["A", "B"]}
    await ingest(app, [event(contact_id=contact_id, business=None, evidence={"interest": "x"})])
    assert (await _contact(app, contact_id)).intent_level == "cold"
    await ingest(app, [event(contact_id=contact_id, business=None, evidence=hot)])
    assert (await _contact(app, contact_id)).intent_level == "hot"
    await ingest(app, [event(contact_id=contact_id, business=None, evidence={"timeline": "soon"})])
    assert (await _contact(app, contact_id)).intent_level == "hot"  # a lower tier never lowers it
    # D21: an fcra_blocked signal never sets a price.
    other = await factory.contact(business_name="Other Co", phone="+13035550199")
    await ingest(app, [event(contact_id=other, business=None, evidence={**hot, "credit_score": 700})])
    assert (await _contact(app, other)).intent_level is None


async def test_fcra_evidence_blocks_the_signal_and_links_no_contact(app: FastAPI, factory: Factory) -> None:
    await factory.contact()
    report = await ingest(app, [event(evidence={"timeline": "Q1", "rental_history": "3 evictions"})])
    assert (report.ingested, report.fcra_blocked, report.contacts_created) == (1, 1, 0)
    [signal] = await _signals(app)
    assert (signal.source_status, signal.contact_id) == ("fcra_blocked", None)


async def test_bad_events_are_skipped_and_the_others_go_in(app: FastAPI) -> None:
    report = await ingest(
        app,
        [
            event(industry="spaceships"),
            event(category="bant_qualified", evidence={"budget": 1}),
            event(contact_id="ct_999999", business=None),
            event(),
        ],
    )
    assert report.ingested == 1
    assert [(s.index, s.reason) for s in report.skipped] == [
        (0, "invalid_event"),
        (1, "bant_incomplete"),
        (2, "unknown_contact"),
    ]
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(select(func.count()).select_from(Signal)) == 1


async def test_one_batch_raises_each_contact_to_its_highest_level(app: FastAPI, factory: Factory) -> None:
    hot = {"budget": "$20k", "timeline": "Q1", "vendor_evaluation": ["A"]}
    fresh = await factory.contact(business_name="Fresh Co", phone="+13035550101")
    cold = await factory.contact(business_name="Cold Co", phone="+13035550102")
    already_hot = await factory.contact(business_name="Hot Co", phone="+13035550103")
    blocked = await factory.contact(business_name="Blocked Co", phone="+13035550104")
    await factory.set_intent(cold, "cold")
    await factory.set_intent(already_hot, "hot")
    events = [
        event(contact_id=fresh, business=None, evidence={"interest": "x"}),
        event(contact_id=fresh, business=None, evidence={"timeline": "Q2"}),
        event(contact_id=cold, business=None, evidence=hot),
        event(contact_id=cold, business=None, evidence={"interest": "y"}),
        event(contact_id=already_hot, business=None, evidence={"timeline": "Q3"}),
        event(contact_id=blocked, business=None, evidence={**hot, "credit_score": 700}),
    ]
    await ingest(app, events)
    levels = [(await _contact(app, c)).intent_level for c in (fresh, cold, already_hot, blocked)]
    assert levels == ["warm", "hot", "hot", None]
