"""Migration 20261201_suppression_notices on both databases: suppressions already on the list when it
runs are noted for the accounts that revealed what they cover (by contact id, phone or email, a
contact two entries cover once, for the oldest), so the feed shows them; no webhook event is sent."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

from tests.conftest import (
    asgi_client,
    test_settings,
)
from vpx.app import create_app
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.clock import FixedClock
from vpx.db import UtcDateTime
from vpx.migrations import upgrade
from vpx.models import WebhookDelivery

PREVIOUS = "20261201_data_sources"
WHEN = UtcDateTime()

pytestmark = pytest.mark.asyncio


def _insert(table_name: str, /, **values: Any) -> sa.Insert:
    columns = (sa.column(key, WHEN) if key.endswith("_at") else sa.column(key) for key in values)
    return sa.table(table_name, *columns).insert().values(**values)


def _account(account_id: str, now: datetime) -> sa.Insert:
    return _insert(
        "accounts",
        id=account_id,
        name=account_id,
        plan="free",
        free_credits=0,
        free_period=now.strftime("%Y-%m"),
        paid_credits=0,
        status="active",
        created_at=now,
    )


def _contact(number: int, now: datetime, **fields: Any) -> sa.Insert:
    return _insert(
        "contacts",
        id=number,
        business_name=f"Business {number}",
        name_key=f"business {number}",
        city="Denver",
        city_key="denver",
        state="CO",
        country="US",
        industry="home-services",
        status="active",
        origin="demo",
        created_at=now,
        updated_at=now,
        **fields,
    )


def _reveal(number: int, account_id: str, contact: int, now: datetime) -> sa.Insert:
    return _insert(
        "reveals",
        id=number,
        account_id=account_id,
        contact_id=contact,
        credits_charged=1,
        channel="reveal",
        created_at=now,
    )


def _suppression(number: int, kind: str, value: str, reason: str, at: datetime) -> sa.Insert:
    return _insert(
        "suppressions", id=number, kind=kind, value=value, reason=reason, note="private words", created_at=at
    )


async def _execute(url: str, *statements: sa.Executable) -> None:
    engine = create_async_engine(url)
    try:
        async with engine.begin() as connection:
            for statement in statements:
                await connection.execute(statement)
    finally:
        await engine.dispose()


async def test_suppressions_on_the_list_before_are_noted_for_their_buyers(empty_database: str) -> None:
    url = empty_database
    settings = test_settings(url, worker_in_process=False)
    await asyncio.to_thread(upgrade, settings, PREVIOUS)
    now = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    await _execute(
        url,
        _account("acc_first", now),
        _account("acc_second", now),
        _contact(1, now, phone="+13035550100", email="Owner@One.example"),
        _contact(2, now, phone="+13035550101", email="owner@two.example"),
        _contact(3, now, phone="+13035550102"),
        _reveal(1, "acc_first", 1, now),
        _reveal(2, "acc_first", 2, now),
        _reveal(3, "acc_second", 1, now),
        _reveal(4, "acc_second", 3, now),
        _suppression(1, "email", "owner@one.example", "opt_out", now + timedelta(hours=1)),
        _suppression(2, "contact", "ct_1", "fcra", now + timedelta(hours=2)),  # the same contact: noted once
        _suppression(3, "phone", "+13035550101", "do_not_contact", now + timedelta(hours=3)),
    )
    await asyncio.to_thread(upgrade, settings)

    app = create_app(settings, clock=FixedClock(now + timedelta(days=1)))
    try:
        keys = {}
        async with app.state.database.write_sessions() as session, session.begin():
            for account_id in ("acc_first", "acc_second"):
                _, keys[account_id] = await key_service.create_key(
                    session,
                    account_id=account_id,
                    key_type=KeyType.ro,
                    name="ro",
                    ip_allowlist=[],
                    now=now,
                    settings=settings,
                )
        async with asgi_client(app) as client:
            shown = {}
            for account_id, key in keys.items():
                response = await client.get("/api/v1/suppressions/feed", headers={"X-API-Key": key})
                assert response.status_code == 200, response.text
                shown[account_id] = [(i["contact_id"], i["reason"]) for i in response.json()["suppressions"]]
        assert shown == {
            "acc_first": [("ct_2", "do_not_contact"), ("ct_1", "opt_out")],
            "acc_second": [("ct_1", "opt_out")],
        }
        async with app.state.database.read_sessions() as session:
            assert await session.scalar(sa.select(sa.func.count()).select_from(WebhookDelivery)) == 0
    finally:
        await app.state.database.dispose()
