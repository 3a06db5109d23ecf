"""signals.csv (D30): D22's filters, every page of the query, RFC 4180.

Real signals from the ingestion pipeline: every page of the query, flattened D19 objects, and
fcra_blocked ones reduced to their public fields (D19).
"""

from __future__ import annotations

import csv
import io

import httpx
import pytest
from fastapi import FastAPI

from tests.factories import Factory
from tests.signals.support import event, ingest
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


async def test_every_page_of_the_query_is_exported(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    # More signals than one page of the export (PAGE_SIZE), in two categories, newest first.
    contact = await factory.contact()
    events = [
        event(contact_id=contact, business=None, category="permit_filed", source_record_id=f"p{n}", topic=f"roof {n}")
        for n in range(signal_export.PAGE_SIZE + 5)
    ]
    events.append(event(contact_id=contact, business=None, topic="=cmd|' /C calc'!A0", source_record_id="evil"))
    await ingest(app, events)
    account = await factory.account()
    params = {"category": "permit_filed", "since": "2026-11-01T00:00:00Z"}
    response = await client.get(URL, params=params, headers=account.headers())
    rows = list(csv.DictReader(io.StringIO(response.text, newline="")))
    assert [r["topic"] for r in rows] == [f"roof {n}" for n in reversed(range(signal_export.PAGE_SIZE + 5))]
    assert rows[0]["contact_id"] == contact and rows[0]["contact_business_name"] == "Acme Plumbing LLC"
    assert rows[0]["reveal_cost"] == "1" and rows[0]["intent_level"] == "cold"
    everything = await client.get(URL, headers=account.headers())
    assert "'=cmd" in everything.text  # free text is neutralised against spreadsheet formulas


async def test_blocked_signals_export_only_their_public_fields(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    contact = await factory.contact()
    secret = {"timeline": "Q1", "credit_score": 512}
    await ingest(app, [event(contact_id=contact, business=None, evidence=secret, topic="SECRET", summary="SECRET")])
    account = await factory.account()
    for params in ({"source_status": "fcra_blocked"}, {}):
        response = await client.get(URL, params=params, headers=account.headers())
        [row] = list(csv.DictReader(io.StringIO(response.text, newline="")))
        assert row["source_status"] == "fcra_blocked" and row["state"] == "CO" and row["industry"] == "home-services"
        assert row["contact_id"] == "" and row["summary"] == "" and row["topic"] == "" and row["reveal_cost"] == ""
        assert "SECRET" not in response.text and "Acme" not in response.text and "512" not in response.text
