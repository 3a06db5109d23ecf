"""D19, D21: no path leaks an fcra_blocked signal's contact or evidence — query, get, batch, purchase
(451), exports, webhooks, and the stream's read (signals_after, which signals-stream serves)."""

from __future__ import annotations

import pytest
from fastapi import FastAPI

from tests.conftest import asgi_client
from tests.factories import Factory
from tests.signals.support import event, ingest
from vpx.signals import service as signal_service
from vpx.signals.service import SignalFilter

pytestmark = pytest.mark.asyncio

SECRET = "Zyxwvut"  # appears only in the blocked signal's evidence, topic, summary and contact


async def test_no_path_shows_a_blocked_signals_contact_or_evidence(app: FastAPI, factory: Factory) -> None:
    contact = await factory.contact(business_name=f"{SECRET} Holdings", phone="+13035550177")
    evidence = {"timeline": "Q1", "budget": SECRET, "criminal_record": SECRET}
    blocked = event(contact_id=contact, business=None, evidence=evidence, topic=SECRET, summary=SECRET)
    [signal_id] = (await ingest(app, [blocked])).signal_ids
    account = await factory.account()
    async with asgi_client(app, **account.headers("full")) as http:
        answers = [
            await http.get("/api/v1/signals"),
            await http.get("/api/v1/signals", params={"source_status": "fcra_blocked"}),
            await http.get(f"/api/v1/signals/{signal_id}"),
            await http.post("/api/v1/signals/batch", json={"queries": [{}, {"source_status": "fcra_blocked"}]}),
            await http.post(f"/api/v1/signals/{signal_id}/purchase"),
            await http.get("/api/v1/exports/signals.csv"),
            await http.get("/api/v1/exports/signals.csv", params={"source_status": "fcra_blocked"}),
        ]
        assert [a.status_code for a in answers] == [200, 200, 200, 200, 451, 200, 200]
        for answer in answers:
            assert SECRET not in answer.text and contact not in answer.text, answer.request.url
            assert '"contact":{' not in answer.text.replace(" ", "")
        assert signal_id in answers[0].text and signal_id in answers[5].text  # present, reduced
        view = answers[2].json()
        kept = {k for k, v in view.items() if v is not None}
        assert kept == {"id", "sequence", "category", "industry", "state", "source_status", "observed_at", "created_at"}
        # The contact itself was never touched by the blocked signal: no price tier from it (D9).
        preview = (await http.get(f"/api/v1/contacts/{contact}")).json()
        assert preview["reveal_cost"] == 1
    async with app.state.database.read_sessions() as session:
        streamed = await signal_service.signals_after(
            session, after_sequence=0, signal_filter=SignalFilter(), limit=10, settings=app.state.settings
        )
        asked = await signal_service.signals_after(
            session,
            after_sequence=0,
            signal_filter=SignalFilter(source_status="fcra_blocked"),
            limit=10,
            settings=app.state.settings,
        )
    assert streamed == []  # a stream without the filter never carries it (D19)
    [only] = asked
    assert only.contact is None and only.evidence is None and SECRET not in only.model_dump_json()
    assert signal_service.stream_visible(SignalFilter(), only) is False
    assert signal_service.stream_visible(SignalFilter(source_status="fcra_blocked"), only) is True
