"""Shared by the compliance tests: running the DROP cycle's steps against the fake, reading contacts."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from sqlalchemy import select

from tests.compliance.conftest import drop_client
from tests.compliance.fake_drop import API_KEY, FakeDrop
from vpx.compliance import audit
from vpx.compliance.drop import cycle
from vpx.compliance.drop.schedule import status
from vpx.models import Contact, Suppression


async def pull(app: FastAPI, drop: FakeDrop, *, key: str = API_KEY) -> cycle.PullResult:
    client = drop_client(drop, key=key)
    try:
        return await cycle.pull(app.state.database, client=client, now=app.state.clock.now())
    finally:
        await client.close()


async def report(app: FastAPI, drop: FakeDrop) -> dict[str, Any]:
    client = drop_client(drop)
    try:
        return await cycle.report(app.state.database, client=client, now=app.state.clock.now())
    finally:
        await client.close()


async def drop_status(app: FastAPI) -> dict[str, Any]:
    async with app.state.database.read_sessions() as session:
        return await status(session, app.state.settings, now=app.state.clock.now())


async def contact(app: FastAPI, public_id: str) -> Contact:
    async with app.state.database.read_sessions() as session:
        found = await session.get(Contact, int(public_id.removeprefix("ct_")))
        assert found is not None
        return found


async def entries(app: FastAPI) -> list[tuple[str, str, str]]:
    async with app.state.database.read_sessions() as session:
        rows = await session.execute(
            select(Suppression.kind, Suppression.value, Suppression.reason).order_by(Suppression.id)
        )
        return [(kind, value, reason) for kind, value, reason in rows]


async def chain_ok(app: FastAPI) -> audit.ChainReport:
    async with app.state.database.read_sessions() as session:
        return await audit.verify(session)


async def audit_kinds(app: FastAPI) -> list[str]:
    from vpx.models import ComplianceEvent

    async with app.state.database.read_sessions() as session:
        return list(await session.scalars(select(ComplianceEvent.kind).order_by(ComplianceEvent.id)))
