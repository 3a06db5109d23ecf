"""signals.csv (D30): D22's filters, every page of the query, RFC 4180.

The signal tables do not exist yet, so the export answers with its header row; the paging and the
flattening of D19 signal objects are shown with a stand-in page source.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from tests.factories import Factory
from vpx.exports import signals as signal_export

pytestmark = pytest.mark.asyncio

URL = "/api/v1/exports/signals.csv"


async def test_export_is_a_csv_with_its_header(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    response = await client.get(URL, params={"category": "permit_filed", "state": "co"}, headers=account.headers())
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/csv; charset=utf-8; header=present"
    assert response.headers["content-disposition"] == 'attachment; filename="signals.csv"'
    assert response.content == (",".join(signal_export.COLUMNS) + "\r\n").encode()


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"category": "gossip"}, "category"),
        ({"intent_level": "lukewarm"}, "intent_level"),
        ({"industry": "spaceships"}, "industry"),
        ({"state": "ZZ"}, "state"),
        ({"source_status": "maybe"}, "source_status"),
        ({"since": "yesterday"}, "since"),
        ({"since": "2026-11-01T00:00:00"}, "since"),
        ({"since": "2026-11-01"}, "since"),
        ({"since": "1700000000"}, "since"),
        ({"categroy": "permit_filed"}, "categroy"),
    ],
)
async def test_bad_filters_are_422(
    client: httpx.AsyncClient, factory: Factory, params: dict[str, str], field: str
) -> None:
    account = await factory.account()
    response = await client.get(URL, params=params, headers=account.headers())
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == field


def _signal(n: int) -> dict[str, Any]:
    return {
        "id": f"sg_{n}",
        "category": "permit_filed",
        "industry": "construction",
        "intent_level": "warm",
        "source_status": "available",
        "confidence": 0.8,
        "topic": "=cmd|' /C calc'!A0" if n == 0 else "roofing permit",
        "state": "CO",
        "city": "Denver",
        "observed_at": "2026-11-14T09:00:00Z",
        "created_at": "2026-11-14T10:00:00Z",
        "summary": "Permit filed, for a new roof",
        "reveal_cost": 3,
        "contact": {"id": f"ct_{n}", "business_name": "Acme Roofing", "city": "Denver", "state": "CO"},
    }


async def test_every_page_of_the_query_is_exported(
    client: httpx.AsyncClient, factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, Any]] = []

    async def pages(
        session: AsyncSession, *, filters: signal_export.SignalFilters, limit: int, cursor: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        seen.append({"cursor": cursor, "category": filters.category, "since": filters.since})
        start = int(cursor or 0)
        batch = [_signal(n) for n in range(start, min(start + 2, 5))]
        return batch, (str(start + 2) if start + 2 < 5 else None)

    monkeypatch.setattr(signal_export, "fetch_signal_page", pages)
    account = await factory.account()
    params = {"category": "permit_filed", "since": "2026-11-01T00:00:00Z"}
    response = await client.get(URL, params=params, headers=account.headers())
    rows = list(csv.DictReader(io.StringIO(response.text, newline="")))
    assert [r["id"] for r in rows] == ["sg_0", "sg_1", "sg_2", "sg_3", "sg_4"]
    assert [s["cursor"] for s in seen] == [None, "2", "4"]
    assert seen[0]["category"] == "permit_filed" and seen[0]["since"].isoformat() == "2026-11-01T00:00:00+00:00"
    assert rows[1]["contact_id"] == "ct_1" and rows[1]["contact_business_name"] == "Acme Roofing"
    assert rows[1]["summary"] == "Permit filed, for a new roof" and rows[1]["reveal_cost"] == "3"
    assert rows[0]["topic"].startswith("'=cmd")


async def test_blocked_signals_export_their_remaining_fields(
    client: httpx.AsyncClient, factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = {"id": "sg_9", "category": "switching_intent", "industry": "banking", "state": "NY"}
    blocked |= {"source_status": "fcra_blocked", "created_at": "2026-11-14T10:00:00Z"}

    async def one_page(
        session: AsyncSession, *, filters: signal_export.SignalFilters, limit: int, cursor: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        return [blocked], None

    monkeypatch.setattr(signal_export, "fetch_signal_page", one_page)
    account = await factory.account()
    response = await client.get(URL, params={"source_status": "fcra_blocked"}, headers=account.headers())
    row = next(csv.DictReader(io.StringIO(response.text, newline="")))
    assert row["source_status"] == "fcra_blocked" and row["contact_id"] == "" and row["summary"] == ""
