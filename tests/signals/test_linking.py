"""Contact linking at ingestion: the fast path for US phones agrees with phonenumbers, and a new
business starts at its batch's highest level (D9)."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from hypothesis import example, given
from hypothesis import strategies as st
from sqlalchemy import select

from tests.signals.support import event, ingest
from vpx.contacts.normalise import fast_phone_e164, phone_e164
from vpx.models import Contact, Signal
from vpx.signals.events import BusinessRef

_US_FORMATS = (
    "{a}{b}{c}", "({a}) {b}-{c}", "+1 {a} {b} {c}", "1-{a}-{b}-{c}", "{a}.{b}.{c}", "+1{a}{b}{c}", "+{a}{b}{c}",
)  # fmt: skip


@given(
    area=st.integers(0, 999),
    exchange=st.integers(0, 999),
    line=st.integers(0, 9999),
    layout=st.sampled_from(_US_FORMATS),
)
def test_us_phone_shortcut_agrees_with_phonenumbers(area: int, exchange: int, line: int, layout: str) -> None:
    raw = layout.format(a=f"{area:03d}", b=f"{exchange:03d}", c=f"{line:04d}")
    assert fast_phone_e164(raw) == phone_e164(raw)


@given(st.text(alphabet="0123456789 -().+x#/", max_size=18))
@example("+13035550100")
@example("13035550100")
@example("+3035550100")
@example("+44 20 7946 0958")
@example("303-555-0100 x12")
@example("1 (800) 555-0100")
@example("(416) 555-0199")
@example("")
def test_any_phone_text_agrees_with_phonenumbers(raw: str) -> None:
    assert fast_phone_e164(raw) == phone_e164(raw)


@pytest.mark.asyncio
async def test_a_new_business_starts_at_the_highest_level_of_its_batch(app: FastAPI) -> None:
    business = BusinessRef(name="Zephyr Solar Co", city="Boulder", state="CO", phone="(720) 555-0142")
    hot = {"budget": "$20k", "timeline": "Q1", "vendor_evaluation": ["A", "B"]}
    report = await ingest(app, [event(business=business), event(business=business, evidence=hot)])
    assert (report.ingested, report.contacts_created, report.contacts_linked) == (2, 1, 1)
    async with app.state.database.read_sessions() as session:
        contact_ids = set(await session.scalars(select(Signal.contact_id)))
        [contact] = list(await session.scalars(select(Contact).where(Contact.id.in_(contact_ids))))
    assert (contact.intent_level, contact.phone) == ("hot", "+17205550142")
