"""Helpers for the cluster tests: accounts, keys and contacts written through the services into the
cluster's database, evidence sent to one API process's admin API, ledgers read back, SSE streams."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
from httpx_sse import ServerSentEvent, aconnect_sse
from sqlalchemy import func, select

from tests.faults.support import wait_until as wait_until
from vpx.accounts import service as account_service
from vpx.auth import service as key_service
from vpx.auth.keys import KeyType
from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.contacts.search.backends import backend_for
from vpx.credits import service as credit_service
from vpx.db import Database
from vpx.models import Account, LedgerEntry

WAIT_S = 30.0  # how long to wait for something the cluster is about to do, before failing


@dataclass(frozen=True)
class Customer:
    id: str
    keys: dict[str, str]

    def headers(self, key_type: str = "live") -> dict[str, str]:
        return {"X-API-Key": self.keys[key_type]}


async def new_account(
    database: Database,
    *,
    credits: int = 0,
    key_types: tuple[str, ...] = ("ro", "live", "full"),
    **allowlists: list[str],
) -> Customer:
    """An account on the free plan (25 free credits) plus ``credits`` granted, with a key of each
    type (``<type>=[addresses]`` gives that key an IP allow-list)."""
    settings, now = database.settings, datetime.now(UTC)
    async with database.write_sessions() as session, session.begin():
        account = await account_service.create_account(
            session, name="cluster test", email=None, plan="free", now=now, settings=settings
        )
        if credits:
            await credit_service.add_credits(
                session, account_id=account.id, amount=Decimal(credits), kind="grant", reference=None,
                description="cluster test", now=now, settings=settings,
            )  # fmt: skip
        keys = {}
        for key_type in key_types:
            _, keys[key_type] = await key_service.create_key(
                session, account_id=account.id, key_type=KeyType(key_type), name=key_type,
                ip_allowlist=allowlists.get(key_type, []), now=now, settings=settings,
            )  # fmt: skip
    return Customer(account.id, keys)


async def new_contacts(database: Database, count: int, *, state: str, city: str, area: str) -> list[str]:
    """``count`` home-services businesses in one city; their public ids."""
    now = datetime.now(UTC)
    rows = [
        contact_row(
            {"business_name": f"{city} Plumbing {n}", "city": city, "state": state, "industry": "home-services",
             "phone": f"+1{area}555{n:04d}", "email": f"office{n}@{city.lower()}-plumbing.example",
             "website": f"https://{city.lower()}-plumbing-{n}.example", "street": f"{n} Main St"},
            origin="registry", now=now,
        )
        for n in range(count)
    ]  # fmt: skip
    sources = [("registry", f"cluster-{state}-{n}", None) for n in range(count)]
    async with database.write_sessions() as session, session.begin():
        ids = await add_contacts(session, rows, search=backend_for("postgresql"), sources=sources, now=now)
    return [f"ct_{i}" for i in ids]


def evidence(contact_id: str, record: str) -> dict[str, Any]:
    """A cold (D20: an interest indicator only, so a 1-credit contact, D9) evidence event (D36)."""
    observed = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    return {
        "category": "switching_intent",
        "industry": "home-services",
        "observed_at": observed,
        "contact_id": contact_id,
        "evidence": {"interest": "new plumbing vendor"},
        "source_record_id": record,
    }


async def ingest_at(http: httpx.AsyncClient, api_url: str, admin_token: str, events: list[dict[str, Any]]) -> list[str]:
    """The events sent to one API process's admin API (D36); the new signals' ids."""
    response = await http.post(f"{api_url}/api/v1/admin/signals", json=events, headers={"X-Admin-Token": admin_token})
    assert response.status_code == 200, response.text
    body = response.json()
    assert not body["skipped"], body["skipped"]
    ids: list[str] = body["signal_ids"]
    return ids


async def ledger_and_balance(database: Database, account_id: str, kind: str | None = None) -> tuple[Decimal, Decimal]:
    """The sum of the account's ledger entries (of ``kind`` only, when given) and its balance."""
    async with database.read_sessions() as session:
        entries = select(func.coalesce(func.sum(LedgerEntry.amount), 0)).where(LedgerEntry.account_id == account_id)
        if kind is not None:
            entries = entries.where(LedgerEntry.kind == kind)
        total = Decimal(await session.scalar(entries) or 0)
        free, paid = (
            await session.execute(select(Account.free_credits, Account.paid_credits).where(Account.id == account_id))
        ).one()
    return total, free + paid


async def count_ledger_entries(database: Database, account_id: str, kind: str) -> int:
    async with database.read_sessions() as session:
        found = await session.scalar(
            select(func.count())
            .select_from(LedgerEntry)
            .where(LedgerEntry.account_id == account_id, LedgerEntry.kind == kind)
        )
    return int(found or 0)


class Stream:
    """An open signal stream (D23), read by a background task into a queue."""

    def __init__(self) -> None:
        self.events: asyncio.Queue[ServerSentEvent] = asyncio.Queue()
        self.opened = asyncio.Event()

    async def next_signal(self) -> dict[str, Any]:
        while True:
            sse = await asyncio.wait_for(self.events.get(), timeout=WAIT_S)
            if sse.event == "signal":
                data: dict[str, Any] = json.loads(sse.data)
                assert sse.id == str(data["sequence"])
                return data

    async def signals_until(self, last_id: str) -> list[dict[str, Any]]:
        """Every signal message up to and including the signal ``last_id``."""
        got = [await self.next_signal()]
        while got[-1]["id"] != last_id:
            got.append(await self.next_signal())
        return got


async def _read(url: str, headers: dict[str, str], params: dict[str, str], stream: Stream) -> None:
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(30, read=None)) as http,
        aconnect_sse(http, "GET", f"{url}/api/v1/signals/stream", headers=headers, params=params) as source,
    ):
        assert source.response.status_code == 200, await source.response.aread()
        async for sse in source.aiter_sse():
            stream.opened.set()
            await stream.events.put(sse)


@contextlib.asynccontextmanager
async def streaming(url: str, headers: dict[str, str], params: dict[str, str]) -> AsyncIterator[Stream]:
    """A stream open (its first message received) for the block; closed, as a client that goes away, after it."""
    stream = Stream()
    task = asyncio.create_task(_read(url, headers, params, stream))
    try:
        await asyncio.wait_for(stream.opened.wait(), timeout=WAIT_S)
        yield stream
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
