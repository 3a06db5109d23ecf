"""The quality figures: `vpx quality --json` (a subprocess) and GET /api/v1/admin/quality answer the same
object: emails by deliverability status with their shares, bounce rates overall, by source and by
import day, reports opened, open, confirmed and dismissed, values found bad, and refunds per month."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import update

from tests.factories import Factory
from tests.quality.support import ADMIN_TOKEN, buyer, report, reveal
from tests.test_cli import vpx
from vpx.clock import FixedClock
from vpx.deliverability.checks import STATUSES
from vpx.models import Contact

pytestmark = pytest.mark.asyncio
ADMIN = {"X-Admin-Token": ADMIN_TOKEN}


async def set_status(app: FastAPI, contact_id: str, status: str) -> None:
    async with app.state.database.write_sessions() as session, session.begin():
        await session.execute(
            update(Contact).where(Contact.id == int(contact_id.removeprefix("ct_"))).values(email_status=status)
        )


async def test_quality_figures_from_the_cli_and_the_admin_api(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, clock: FixedClock, database_url: str
) -> None:
    first_day = clock.now()
    registry = await factory.contacts(
        [
            {"business_name": f"Registry Co {i}", "city": "Denver", "state": "CO", "industry": "home-services",
             "email": f"owner@registry{i}.example", "phone": f"+1303555010{i}"}
            for i in range(4)
        ]
    )  # fmt: skip
    clock.set(first_day + timedelta(days=1))
    demo = await factory.contacts(
        [
            {"business_name": f"Demo Co {i}", "city": "Austin", "state": "TX", "industry": "home-services",
             "email": f"owner@demo{i}.example" if i else None, "phone": f"+1512555010{i}"}
            for i in range(2)
        ],
        origin="demo",
    )  # fmt: skip
    for contact_id, status in zip(registry, ("bounced", "mx_found", "mx_found", "no_mx"), strict=True):
        await set_status(app, contact_id, status)
    await set_status(app, demo[1], "bounced")

    first, second, third = [await buyer(client, factory) for _ in range(3)]
    for account in (first, second, third):
        await reveal(client, account, registry[1])
    await report(client, first, registry[1], "phone", "wrong")
    await report(client, second, registry[1], "phone", "wrong")  # confirmed: two refunds
    dismissed = await report(client, third, registry[1], "email", "wrong")
    await client.post(f"/api/v1/admin/reports/{dismissed['id']}/dismiss", headers=ADMIN)
    await report(client, first, registry[1], "email", "disconnected")  # open

    figures = await asyncio.to_thread(vpx, database_url, "quality")
    assert set(figures) == {
        "generated_at", "emails", "email_status", "bounce_rate", "bounce_rate_by_source",
        "bounce_rate_by_import_date", "bad_fields", "reports", "refunds_by_month",
    }  # fmt: skip
    assert figures["emails"] == 5
    shares = {row["status"]: (row["count"], row["share"]) for row in figures["email_status"]}
    assert list(shares) == list(STATUSES)
    assert shares["bounced"] == (2, 0.4) and shares["mx_found"] == (2, 0.4) and shares["no_mx"] == (1, 0.2)
    assert shares["unknown"] == (0, 0.0)
    assert figures["bounce_rate"] == {"emails": 5, "bounced": 2, "rate": 0.4}
    assert figures["bounce_rate_by_source"] == [
        {"source": "demo", "emails": 1, "bounced": 1, "rate": 1.0},
        {"source": "registry", "emails": 4, "bounced": 1, "rate": 0.25},
    ]
    assert figures["bounce_rate_by_import_date"] == [
        {"imported_on": first_day.date().isoformat(), "emails": 4, "bounced": 1, "rate": 0.25},
        {"imported_on": (first_day + timedelta(days=1)).date().isoformat(), "emails": 1, "bounced": 1, "rate": 1.0},
    ]
    assert figures["bad_fields"] == {"phone": 1, "email": 0, "website": 0, "address": 0}
    assert figures["reports"] == {"opened": 4, "open": 1, "confirmed": 2, "dismissed": 1}
    month = clock.now().strftime("%Y-%m")
    assert figures["refunds_by_month"] == [
        {"month": month, "count": 2, "credits": 0.5}
    ]  # two reporters, a quarter each: phone and email are its fields, so its price is half a credit

    over_http = await client.get("/api/v1/admin/quality", headers=ADMIN)
    assert over_http.status_code == 200, over_http.text
    answered = over_http.json()
    assert {k: v for k, v in answered.items() if k != "generated_at"} == {
        k: v for k, v in figures.items() if k != "generated_at"
    }
    assert (await client.get("/api/v1/admin/quality")).status_code == 401
