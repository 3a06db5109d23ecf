"""topic_surge signals computed from research activity (issue 4), on constructed histories: a flat
history scores nothing; a spike the whole vertical shares scores nothing; a business's own spike
scores what the formula says and becomes one cold signal, once per week-ending day; the CLI."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.factories import Factory
from tests.test_cli import vpx
from vpx.models import Signal, TopicActivity
from vpx.signals.pipeline import ingest_events
from vpx.signals.sources import surge

pytestmark = pytest.mark.asyncio

AT = date(2026, 11, 20)


def history(contact: str, topic: str, weekly: list[int]) -> list[tuple[int, surge.ActivityIn]]:
    """Events over the 9 weeks ending with AT: ``weekly[0]`` the oldest week, ``weekly[-1]`` this one."""
    events = []
    for weeks_back, count in enumerate(reversed(weekly)):
        if count:
            day = f"{AT - timedelta(days=7 * weeks_back + 1)}T12:00:00Z"
            item = surge.ActivityIn.model_validate(
                {"contact_id": contact, "topic": topic, "observed_at": day, "count": count}
            )
            events.append((0, item))
    return events


async def _record(app: FastAPI, events: list[tuple[int, surge.ActivityIn]]) -> list[surge.ActivitySkip]:
    skipped: list[surge.ActivitySkip] = []
    await surge.record_activity(app.state.database, events, skipped, now=datetime.now(UTC))
    return skipped


async def _scores(app: FastAPI) -> dict[tuple[int, str], surge.Surge]:
    async with app.state.database.read_sessions() as session:
        return {(s.contact_id, s.topic): s for s in await surge.compute_surges(session, at=AT)}


def formula(this_week: int, baseline: float, peer: float = 1.0) -> int:
    return surge.surge_score((this_week + 1) / (baseline + 1), peer)


async def test_flat_history_scores_nothing(app: FastAPI, factory: Factory) -> None:
    contact = await factory.contact()
    await _record(app, history(contact, "crm software", [10] * 9))
    [scored] = (await _scores(app)).values()
    assert scored.this_week == 10 and scored.baseline == 10 and scored.score == 0


async def test_a_spike_the_whole_vertical_shares_is_not_intent(app: FastAPI, factory: Factory) -> None:
    contacts = [await factory.contact(business_name=f"Plumber {n}", phone=f"+1303555010{n}") for n in range(4)]
    for contact in contacts:
        await _record(app, history(contact, "water heaters", [2] * 8 + [20]))
    scores = await _scores(app)
    # Each: own (20+1)/(2+1) = 7; its three peers (60+1)/(6+1) = 8.7 → relative below 1 → 0.
    assert all(s.own_ratio == 7.0 and s.peer_ratio == 61 / 7 and s.score == 0 for s in scores.values())


async def test_a_businesss_own_spike_becomes_one_cold_signal(app: FastAPI, factory: Factory) -> None:
    spiking = await factory.contact(business_name="Spiking Plumbing", phone="+13035550111")
    steady = await factory.contact(business_name="Steady Plumbing", phone="+13035550112")
    await _record(app, history(spiking, "crm software", [2] * 8 + [20]))
    await _record(app, history(steady, "crm software", [5] * 9))
    scores = await _scores(app)
    top = scores[(int(spiking[3:]), "crm software")]
    # own (20+1)/(2+1) = 7; peers (5+1)/(5+1) = 1 → 100 × (1 − 1/7) = 86.
    assert top.own_ratio == 7.0 and top.peer_ratio == 1.0 and top.score == formula(20, 2) == 86
    assert scores[(int(steady[3:]), "crm software")].score == 0
    events = surge.surge_events(scores.values(), at=AT, threshold=60)
    report = await ingest_events(app.state.database, events, settings=app.state.settings, clock=app.state.clock)
    assert report.ingested == 1
    async with app.state.database.read_sessions() as session:
        [signal] = list(await session.scalars(select(Signal)))
    assert signal.category == "topic_surge" and signal.intent_level == "cold" and signal.contact_id == int(spiking[3:])
    assert signal.confidence == 0.86 and signal.topic == "crm software" and signal.evidence["surge_score"] == 86
    again = await ingest_events(
        app.state.database, surge.surge_events(scores.values(), at=AT, threshold=60),
        settings=app.state.settings, clock=app.state.clock,
    )  # fmt: skip
    assert again.ingested == 0 and again.duplicates == 1


async def test_small_numbers_and_the_threshold(app: FastAPI, factory: Factory) -> None:
    quiet = await factory.contact(business_name="Quiet Co", phone="+13035550113")
    await _record(app, history(quiet, "payroll", [0] * 8 + [4]))  # 5× but only 4 events this week
    scores = await _scores(app)
    assert scores[(int(quiet[3:]), "payroll")].score == formula(4, 0) == 80
    assert surge.surge_events(scores.values(), at=AT, threshold=60) == []
    assert surge.surge_events(scores.values(), at=AT, threshold=90) == []


async def test_unknown_contacts_and_bad_lines_are_skipped(app: FastAPI, factory: Factory, tmp_path: Path) -> None:
    contact = await factory.contact()
    path = tmp_path / "activity.jsonl"
    lines = [
        {"contact_id": contact, "topic": "CRM Software", "observed_at": "2026-11-19T10:00:00Z", "count": 3},
        {"contact_id": "ct_999999", "topic": "crm software", "observed_at": "2026-11-19T10:00:00Z"},
        {"contact_id": contact, "topic": "", "observed_at": "2026-11-19T10:00:00Z"},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    skipped: list[surge.ActivitySkip] = []
    recorded = await surge.record_activity(
        app.state.database, surge.read_activity(path, skipped), skipped, now=datetime.now(UTC)
    )
    assert recorded == 1
    assert sorted((s.line, s.reason) for s in skipped) == [
        (2, "unknown_contact"),
        (3, "invalid_event"),
        (4, "invalid_event"),
    ]
    async with app.state.database.read_sessions() as session:
        [row] = list(await session.scalars(select(TopicActivity)))
    assert row.topic == "crm software" and row.events == 3 and row.day == date(2026, 11, 19)


async def test_the_cli(app: FastAPI, factory: Factory, database_url: str, tmp_path: Path) -> None:
    contact = await factory.contact()
    path = tmp_path / "activity.jsonl"
    rows = [
        {"contact_id": contact, "topic": "solar financing", "observed_at": f"{AT - timedelta(days=d)}T09:00:00Z",
         "count": 1 if d > 7 else 6}
        for d in range(0, 60, 3)
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    recorded = vpx(database_url, "signals", "activity", str(path))
    assert recorded["recorded"] == len(rows) and recorded["skipped"] == []
    result = vpx(database_url, "signals", "surge", "--at", AT.isoformat())
    assert result["at"] == "2026-11-20" and result["surging"] == 1 and result["ingested"] == 1
    again = vpx(database_url, "signals", "surge", "--at", AT.isoformat())
    assert again["ingested"] == 0 and again["duplicates"] == 1
    bad = vpx(database_url, "signals", "surge", "--at", "yesterday", check=False)
    assert bad["error"]["code"] == "invalid_parameters"
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(select(func.count()).select_from(Signal)) == 1
