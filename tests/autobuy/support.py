"""Helpers for the auto-buy tests: rules through the API, signals through the real pipeline."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import func, select

from tests.signals.support import event, ingest
from vpx.models import AutoBuyPurchase, LedgerEntry

RULES = "/api/v1/buyer/auto-buy/rules"
PURCHASES = "/api/v1/buyer/auto-buy/purchases"
WARM = {"timeline": "Q2"}  # D20 warm: D9 price 3
COLD = {"interest": "crm"}  # D20 cold: D9 price 1


def rule_body(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": "Denver plumbers", "industries": ["home-services"], "states": ["CO"]}
    body["min_confidence"] = 0.0
    body.update(fields)
    return body


async def create_rule(client: httpx.AsyncClient, headers: dict[str, str], **fields: Any) -> dict[str, Any]:
    response = await client.post(RULES, json=rule_body(**fields), headers=headers)
    assert response.status_code == 201, response.text
    rule: dict[str, Any] = response.json()
    return rule


async def signal_for(app: FastAPI, contact_id: str, *, record: str, **fields: Any) -> str:
    """Ingests one signal about the contact; returns its id."""
    values: dict[str, Any] = {"contact_id": contact_id, "business": None, "evidence": COLD, "source_record_id": record}
    values.update(fields)
    report = await ingest(app, [event(**values)])
    [signal_id] = report.signal_ids
    return signal_id


async def purchases_of(app: FastAPI, account_id: str) -> list[AutoBuyPurchase]:
    async with app.state.database.read_sessions() as session:
        rows = await session.scalars(
            select(AutoBuyPurchase).where(AutoBuyPurchase.account_id == account_id).order_by(AutoBuyPurchase.id)
        )
        return list(rows)


async def auto_buy_spent(app: FastAPI, account_id: str) -> Decimal:
    """What the ledger says auto-buy cost the account (a positive number)."""
    async with app.state.database.read_sessions() as session:
        total = await session.scalar(
            select(func.coalesce(func.sum(LedgerEntry.amount), 0)).where(
                LedgerEntry.account_id == account_id, LedgerEntry.kind == "auto_buy"
            )
        )
    return -Decimal(total)
