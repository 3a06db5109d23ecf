"""The dashboard's signals page: the latest signals as a table, newest first, with their price (D9);
an fcra_blocked signal shows no contact and no evidence (D19)."""

from __future__ import annotations

import pytest
from fastapi import FastAPI

from tests.dashboard.conftest import Browser
from tests.factories import Factory
from tests.signals.support import event, ingest

pytestmark = pytest.mark.asyncio


async def test_signals_page_lists_the_latest_signals(app: FastAPI, web: Browser, factory: Factory) -> None:
    await web.sign_up()
    empty = (await web.get("/dashboard/signals")).text
    assert "No signals yet" in empty
    contact = await factory.contact()
    hot = {"budget": "$9k", "timeline": "Q1", "vendor_evaluation": ["A"]}
    await ingest(
        app,
        [
            event(contact_id=contact, business=None, topic="helpdesk software", source_record_id="1"),
            event(contact_id=contact, business=None, evidence=hot, category="tech_install", source_record_id="2"),
            event(evidence={"credit_score": 1, "topic": "Hidden"}, source_record_id="3", topic="Hidden topic"),
        ],
    )
    response = await web.get("/dashboard/signals")
    assert response.status_code == 200
    page = response.text
    rows = page.split('<tr data-signal-id="')[1:]
    assert len(rows) == 3
    assert "FCRA blocked" in rows[0] and "Hidden" not in page and "Acme" not in rows[0]
    assert "tech install" in rows[1] and ">hot<" in rows[1] and "6 credits" in rows[1]
    assert "Acme Plumbing LLC" in rows[2] and "helpdesk software" in rows[2] and "6 credits" in rows[2]
    assert f'href="/dashboard/contacts/{contact}"' in rows[2]
