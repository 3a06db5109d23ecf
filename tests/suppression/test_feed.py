"""GET /api/v1/suppressions/feed: the calling account's suppressed contacts, newest first, paged with
an opaque cursor; stable while suppressions are added (no skip, no repeat); readable with every key
type; bad paging is a 422 problem; and notice ids follow commit order under concurrent writers."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from tests import factories
from tests.factories import Factory
from tests.suppression.support import feed, reveal, walk
from vpx.clock import FixedClock
from vpx.cursors import encode_cursor
from vpx.models import SuppressionNotice
from vpx.suppression import service as suppression_service
from vpx.suppression.service import SuppressionKind, SuppressionReason

pytestmark = pytest.mark.asyncio


async def revealed_contacts(
    client: httpx.AsyncClient, factory: Factory, account: factories.TestAccount, count: int
) -> list[str]:
    ids = await factory.contacts(
        [
            {
                "business_name": f"Acme Plumbing {n}",
                "city": "Denver",
                "state": "CO",
                "industry": "home-services",
                "phone": f"+1303555{n:04d}",
                "email": f"owner{n}@acme{n}.example",
            }
            for n in range(count)
        ]
    )
    for contact_id in ids:
        await reveal(client, account, contact_id)
    return ids


async def suppress(factory: Factory, contact_id: str, clock: FixedClock) -> None:
    clock.set(clock.now() + timedelta(seconds=1))
    await factory.suppress("contact", contact_id)


async def test_newest_first_in_pages_only_the_accounts_own(
    client: httpx.AsyncClient, factory: Factory, clock: FixedClock
) -> None:
    account = await factory.account(credits=100)
    other = await factory.account(credits=100)
    ids = await revealed_contacts(client, factory, account, 7)
    await reveal(client, other, ids[0])
    for contact_id in ids[:5]:
        await suppress(factory, contact_id, clock)
    assert await walk(client, account, limit=2) == list(reversed(ids[:5]))
    assert await walk(client, other, limit=2) == [ids[0]]
    first = await feed(client, account, limit=2)
    times = [item["suppressed_at"] for item in first["suppressions"]]
    assert times == sorted(times, reverse=True) and first["limit"] == 2
    # A page that ends the list says so, even when full.
    last = await feed(client, account, limit=5)
    assert len(last["suppressions"]) == 5 and last["next_cursor"] is None


async def test_pages_neither_skip_nor_repeat_while_suppressions_are_added(
    client: httpx.AsyncClient, factory: Factory, clock: FixedClock
) -> None:
    account = await factory.account(credits=100)
    ids = await revealed_contacts(client, factory, account, 24)
    before, during = ids[:12], ids[12:]
    for contact_id in before:
        await suppress(factory, contact_id, clock)

    async def add_while_paging() -> None:
        for contact_id in during:
            await factory.suppress("contact", contact_id)
            await asyncio.sleep(0)

    async def page_through() -> list[str]:
        seen: list[str] = []
        cursor = None
        while True:
            page = await feed(client, account, limit=3, **({"cursor": cursor} if cursor else {}))
            seen += [item["contact_id"] for item in page["suppressions"]]
            cursor = page["next_cursor"]
            await asyncio.sleep(0)
            if cursor is None:
                return seen

    seen, _ = await asyncio.gather(page_through(), add_while_paging())
    assert len(seen) == len(set(seen))  # nothing twice
    # Everything there when the walk began comes, in order; what arrived meanwhile comes first or not at all.
    assert [c for c in seen if c in before] == list(reversed(before))
    arrived = [i for i, c in enumerate(seen) if c not in before]
    assert set(seen) - set(before) <= set(during) and all(i < seen.index(before[-1]) for i in arrived)
    assert sorted(await walk(client, account, limit=5)) == sorted(ids)


async def test_notice_ids_follow_commit_order(app: FastAPI, client: httpx.AsyncClient, factory: Factory) -> None:
    """A writer that started later waits for the first to commit, so a reader below a cursor never
    misses a notice that commits later with a lower id."""
    account = await factory.account(credits=100)
    slow, fast = await revealed_contacts(client, factory, account, 2)
    database = app.state.database

    async def add(contact_id: str) -> None:
        async with database.write_sessions() as session, session.begin():
            await suppression_service.add_suppression(
                session,
                kind=SuppressionKind.contact,
                value=contact_id,
                reason=SuppressionReason.opt_out,
                note="",
                now=factory.clock.now(),
            )

    async with database.write_sessions() as session, session.begin():
        await suppression_service.add_suppression(
            session,
            kind=SuppressionKind.contact,
            value=slow,
            reason=SuppressionReason.opt_out,
            note="",
            now=factory.clock.now(),
        )
        second = asyncio.create_task(add(fast))
        await asyncio.sleep(0.3)
        assert not second.done()  # held until the first commits
    await asyncio.wait_for(second, timeout=30)
    async with database.read_sessions() as session:
        order = list(await session.scalars(select(SuppressionNotice.contact_id).order_by(SuppressionNotice.id)))
    assert [f"ct_{n}" for n in order] == [slow, fast]


async def test_every_key_type_reads_it_and_nobody_else(client: httpx.AsyncClient, factory: Factory) -> None:
    account = await factory.account()
    for key_type in ("ro", "live", "full"):
        assert (await feed(client, account, key_type))["suppressions"] == []
    refused = await client.get("/api/v1/suppressions/feed")
    assert refused.status_code == 401
    assert refused.headers["content-type"].startswith("application/problem+json")


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": "0"}, "limit"),
        ({"limit": "101"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"cursor": encode_cursor("sg", 5)}, "cursor"),  # another list's cursor
        ({"cursor": "x" * 201}, "cursor"),
        ({"since": "2026-01-01T00:00:00Z"}, "since"),
    ],
)
async def test_bad_paging_is_a_problem(
    client: httpx.AsyncClient, factory: Factory, params: dict[str, str], field: str
) -> None:
    account = await factory.account()
    response = await client.get("/api/v1/suppressions/feed", params=params, headers=account.headers("ro"))
    assert response.status_code == 422, response.text
    problem = response.json()
    assert response.headers["content-type"].startswith("application/problem+json")
    assert problem["code"] == "invalid_parameters"
    assert field in {error["field"] for error in problem["errors"]}, problem
