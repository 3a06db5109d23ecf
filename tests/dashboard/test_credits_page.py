"""The credits page (D8, D11): balance, free credits left and the next reset, the ledger with its
running balance, credits spent per UTC day."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from fastapi import FastAPI

from tests.conftest import START
from tests.dashboard.conftest import Browser
from tests.factories import Factory
from vpx.clock import FixedClock
from vpx.credits import service as credit_service
from vpx.dashboard import spending

pytestmark = pytest.mark.asyncio


async def grant(app: FastAPI, account_id: str, amount: int, now: datetime) -> None:
    async with app.state.database.write_sessions() as session, session.begin():
        await credit_service.add_credits(
            session,
            account_id=account_id,
            amount=Decimal(amount),
            kind="grant",
            reference=None,
            description="Welcome grant",
            now=now,
            settings=app.state.settings,
        )


async def reveal(web: Browser, contact: str) -> None:
    response = await web.submit(
        f"/dashboard/contacts/{contact}", f"/dashboard/contacts/{contact}/reveal", {"expected_price": "1"}
    )
    assert response.status_code == 303, response.text


def ledger_rows(page: str) -> list[list[str]]:
    body = page.split('<table class="ledger stack">', 1)[1].split("</table>", 1)[0].split("<tbody>", 1)[1]
    rows = []
    for row in body.split("<tr")[1:]:
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
        rows.append([re.sub(r"\s+", " ", c).strip() for c in cells])
    return rows


async def test_balance_free_credits_and_next_reset(web: Browser, app: FastAPI, factory: Factory) -> None:
    await web.sign_up()
    account_id = await web.account_id()
    await grant(app, account_id, 10, START)
    await reveal(web, await factory.contact())
    page = (await web.get("/dashboard/credits")).text
    assert 'data-testid="credits-total">34<' in page
    assert '24 <span class="figure-unit">of 25 left' in page
    assert "Reset to 25 on <strong>2026-12-01</strong>" in page


async def test_ledger_shows_the_running_balance(web: Browser, app: FastAPI, factory: Factory) -> None:
    await web.sign_up()
    account_id = await web.account_id()
    await grant(app, account_id, 5, START)
    await reveal(web, await factory.contact())
    await reveal(web, await factory.contact(business_name="Second Plumbing", phone="+13035550111"))
    rows = ledger_rows((await web.get("/dashboard/credits")).text)
    assert [(r[1], r[3], r[4]) for r in rows] == [
        ("reveal", "-1", "28"),
        ("reveal", "-1", "29"),
        ("grant", "+5", "30"),
        ("free monthly", "+25", "25"),
    ]


async def test_ledger_pages(web: Browser, app: FastAPI) -> None:
    await web.sign_up()
    account_id = await web.account_id()
    for _ in range(30):
        await grant(app, account_id, 1, START)
    first = (await web.get("/dashboard/credits")).text
    assert len(ledger_rows(first)) == 25
    older = re.search(r'href="(/dashboard/credits\?cursor=[^"]+)">Older entries', first)
    assert older
    second = (await web.get(older.group(1))).text
    assert len(ledger_rows(second)) == 6 and "Older entries" not in second
    bad = await web.get("/dashboard/credits?cursor=nonsense")
    assert bad.status_code == 422 and "cursor" in bad.text


async def test_a_new_month_brings_new_free_credits(web: Browser, factory: Factory, clock: FixedClock) -> None:
    await web.sign_up()
    await reveal(web, await factory.contact())
    clock.set(datetime(2026, 12, 1, 0, 5, tzinfo=UTC))
    await web.sign_in(web.email)
    page = (await web.get("/dashboard/credits")).text
    assert 'data-testid="credits-total">25<' in page and "Reset to 25 on <strong>2027-01-01</strong>" in page
    assert ledger_rows(page)[0][1:] == [
        "free monthly",
        "Free plan credits for 2026-12: 25 (24 unused expired)",
        "+1",
        "25",
    ]


async def test_spending_is_summed_per_utc_day(app: FastAPI, factory: Factory) -> None:
    account = await factory.account(credits=20)
    evening = datetime(2026, 11, 14, 23, 30, tzinfo=UTC)
    plan = [(evening, 1), (evening + timedelta(minutes=20), 3), (evening + timedelta(hours=1), 6)]
    async with app.state.database.write_sessions() as session, session.begin():
        for at, amount in plan:
            await credit_service.spend(
                session,
                account_id=account.id,
                amount=Decimal(amount),
                kind="reveal",
                reference=None,
                description="test",
                now=at,
                settings=app.state.settings,
            )
    async with app.state.database.read_sessions() as session:
        days = await spending.daily_spending(session, account_id=account.id, now=START)
    assert len(days) == 30 and days[-1].day.isoformat() == "2026-11-15"
    by_day = {d.day.isoformat(): d.spent for d in days if d.spent}
    assert by_day == {"2026-11-14": Decimal(4), "2026-11-15": Decimal(6)}
    bars = spending.chart_bars(days)
    assert bars[-1].height == 140 and bars[-2].height == pytest.approx(140 * 4 / 6)


async def test_chart_on_the_page(web: Browser, factory: Factory) -> None:
    await web.sign_up()
    await reveal(web, await factory.contact())
    page = (await web.get("/dashboard/credits")).text
    assert page.count('class="bar"') == 30
    assert "<title>2026-11-15: 1 credit</title>" in page
    assert "1 credit spent in the last 30 days" in page
