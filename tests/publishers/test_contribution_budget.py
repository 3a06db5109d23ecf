"""D17: the daily contribution budget. Every row sent counts (accepted, duplicate, rejected); a request
that would pass what is left today is refused whole (429, Retry-After until midnight UTC) and changes
nothing; a repeat with the same idempotency key is not counted again; concurrent requests never add up
past the budget; the table's migration goes both ways."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from alembic import command
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import create_async_engine

from tests.conftest import test_settings
from tests.factories import Factory
from tests.publishers.test_contribute import URL, row
from tests.webhooks.support import webhook_settings
from vpx.clock import FixedClock
from vpx.config import Settings
from vpx.migrations import alembic_config, upgrade
from vpx.models import Contact, ContributionDay

BUDGET = 10
REVISION = "20261202_contribution_budget"
PARENT = "20261129_refusal_addresses"


@pytest.fixture
def settings(database_url: str) -> Settings:
    return webhook_settings(database_url, contribution_rows_per_day=BUDGET)


def rows(count: int, start: int = 0) -> list[dict[str, Any]]:
    return [row(business_name=f"Budget Clinic {n}", phone=f"+1720555{n:04d}") for n in range(start, start + count)]


async def counted(app: FastAPI, account_id: str) -> int:
    async with app.state.database.read_sessions() as session:
        total = await session.scalar(
            select(func.sum(ContributionDay.rows)).where(ContributionDay.account_id == account_id)
        )
    return int(total or 0)


async def contacts_of(app: FastAPI, account_id: str) -> int:
    async with app.state.database.read_sessions() as session:
        found = await session.scalar(
            select(func.count()).select_from(Contact).where(Contact.publisher_account_id == account_id)
        )
    return int(found or 0)


async def test_every_row_counts_and_a_request_past_the_budget_is_refused_whole(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, clock: FixedClock
) -> None:
    account = await factory.account()
    await factory.contact(business_name="Counted Co", phone="+17205550900")
    # One accepted, one duplicate (of the catalogue), one rejected, one duplicate of the first: four rows.
    first = [rows(1)[0], row(business_name="X", phone="+17205550900"), row(state="ZZ"), rows(1)[0]]
    response = await client.post(URL, json={"contacts": first}, headers=account.headers())
    assert response.json()["counts"] == {"accepted": 1, "duplicate": 2, "rejected": 1}
    assert await counted(app, account.id) == 4
    assert (await client.post(URL, json={"contacts": rows(6, 10)}, headers=account.headers())).status_code == 200
    assert await counted(app, account.id) == BUDGET

    refused = await client.post(URL, json={"contacts": rows(1, 20)}, headers=account.headers())
    assert refused.status_code == 429, refused.text
    problem = refused.json()
    assert problem["code"] == "rate_limited" and "10 rows a day" in problem["detail"]
    assert "midnight UTC" in problem["detail"]
    # The test clock stands at noon UTC: twelve hours to the next day.
    assert refused.headers["Retry-After"] == str(12 * 3600)
    assert await counted(app, account.id) == BUDGET and await contacts_of(app, account.id) == 7

    # Another account has a budget of its own; the next UTC day starts a new one.
    other = await factory.account()
    assert (await client.post(URL, json={"contacts": rows(1, 30)}, headers=other.headers())).status_code == 200
    clock.set(clock.now() + timedelta(days=1))
    again = await client.post(URL, json={"contacts": rows(1, 20)}, headers=account.headers())
    assert again.status_code == 200 and again.json()["counts"]["accepted"] == 1


async def test_what_is_left_is_said_and_a_request_within_it_goes_through(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    account = await factory.account()
    assert (await client.post(URL, json={"contacts": rows(7)}, headers=account.headers())).status_code == 200
    refused = await client.post(URL, json={"contacts": rows(4, 10)}, headers=account.headers())
    assert refused.status_code == 429 and "3 left today" in refused.json()["detail"]
    assert (await client.post(URL, json={"contacts": rows(3, 10)}, headers=account.headers())).status_code == 200
    assert await counted(app, account.id) == BUDGET


async def test_a_request_larger_than_the_whole_budget_is_422(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    account = await factory.account()
    response = await client.post(URL, json={"contacts": rows(BUDGET + 1)}, headers=account.headers())
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "invalid_parameters"
    assert response.json()["errors"][0]["field"] == "contacts"
    assert await counted(app, account.id) == 0 and await contacts_of(app, account.id) == 0


async def test_an_idempotent_repeat_is_not_counted_again(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    account = await factory.account()
    headers = {**account.headers(), "Idempotency-Key": "budget-1"}
    first = await client.post(URL, json={"contacts": rows(5)}, headers=headers)
    repeat = await client.post(URL, json={"contacts": rows(5)}, headers=headers)
    assert first.status_code == repeat.status_code == 200 and repeat.headers["Idempotent-Replayed"] == "true"
    assert await counted(app, account.id) == 5
    assert (await client.post(URL, json={"contacts": rows(5, 10)}, headers=account.headers())).status_code == 200
    # A refused request's key is free again: its repeat is counted as a new request (and refused again).
    over = {**account.headers(), "Idempotency-Key": "budget-2"}
    assert (await client.post(URL, json={"contacts": rows(1, 20)}, headers=over)).status_code == 429
    assert (await client.post(URL, json={"contacts": rows(1, 20)}, headers=over)).status_code == 429
    assert await counted(app, account.id) == BUDGET


async def test_concurrent_contributions_never_pass_the_budget(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    """Twelve requests of 2 rows at once against a budget of 10: exactly five go through, on PostgreSQL
    in transactions that truly overlap."""
    account = await factory.account()

    async def send(n: int) -> int:
        response = await client.post(URL, json={"contacts": rows(2, 100 + 2 * n)}, headers=account.headers())
        return response.status_code

    statuses = await asyncio.gather(*(send(n) for n in range(12)))
    assert sorted(statuses) == [200] * 5 + [429] * 7
    assert await counted(app, account.id) == BUDGET
    assert await contacts_of(app, account.id) == BUDGET


def test_the_budget_table_migration_goes_both_ways(empty_database: str) -> None:
    settings = test_settings(empty_database)
    upgrade(settings)
    assert asyncio.run(_state(settings)) == (True, True)
    command.downgrade(alembic_config(settings), PARENT)
    assert asyncio.run(_state(settings)) == (False, False)
    upgrade(settings)
    assert asyncio.run(_state(settings)) == (True, True)


async def _state(settings: Settings) -> tuple[bool, bool]:
    """Whether the table is there, and whether the database says the revision is applied."""
    engine = create_async_engine(settings.database_url)
    try:
        async with engine.connect() as connection:
            names = await connection.run_sync(lambda sync: sa.inspect(sync).get_table_names())
            versions = set((await connection.execute(sa.text("SELECT version_num FROM alembic_version"))).scalars())
            return "contribution_days" in names, REVISION in versions
    finally:
        await engine.dispose()
