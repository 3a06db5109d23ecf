"""D17: possible duplicates a contribution records, in linear work. Rows of one business held apart by
their phones are each paired with the business's first contact (a star, not every pair), across
requests too; the statements stay bounded however many rows a request has; and the operator's review
(`vpx registries duplicates`) merges and dismisses such pairs as any other."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import select

from tests.factories import Factory
from tests.publishers.test_contribute import contribute, row
from tests.test_cli import vpx
from vpx.models import Contact, PossibleDuplicate


def same_business(count: int, start: int = 0) -> list[dict[str, Any]]:
    numbers = range(start, start + count)
    return [row(business_name="Summit Dental", city="Denver", state="CO", phone=f"+1303221{n:04d}") for n in numbers]


async def pairs_of(app: FastAPI) -> list[tuple[int, int, str, str]]:
    async with app.state.database.read_sessions() as session:
        found = await session.scalars(select(PossibleDuplicate).order_by(PossibleDuplicate.id))
        return [(p.contact_id, p.other_contact_id, p.reason, p.status) for p in found]


def number(public_id: str) -> int:
    return int(public_id.removeprefix("ct_"))


async def test_a_business_sent_with_many_phones_is_a_star_around_its_first_contact(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI
) -> None:
    """300 rows of one business: 300 contacts and 299 pairs (every pair would be 44,850, past what
    one statement may carry on either database)."""
    account = await factory.account()
    body = await contribute(client, account.headers(), same_business(300))
    assert body["counts"] == {"accepted": 300, "duplicate": 0, "rejected": 0}
    ids = [number(r["contact_id"]) for r in body["results"]]
    first = ids[0]
    assert await pairs_of(app) == [(first, other, "phone", "open") for other in ids[1:]]

    # The next request's rows join the same star, whoever sends them.
    other = await factory.account()
    later = await contribute(client, other.headers(), same_business(3, 300))
    later_ids = [number(r["contact_id"]) for r in later["results"]]
    assert (await pairs_of(app))[-3:] == [(first, i, "phone", "open") for i in later_ids]


async def test_a_star_is_reviewed_pair_by_pair(
    client: httpx.AsyncClient, factory: Factory, app: FastAPI, database_url: str
) -> None:
    account = await factory.account()
    body = await contribute(client, account.headers(), same_business(4))
    first, second, third, fourth = (r["contact_id"] for r in body["results"])
    listed = vpx(database_url, "registries", "duplicates")
    assert [[c["id"] for c in d["contacts"]] for d in listed["duplicates"]] == [
        [first, second],
        [first, third],
        [first, fourth],
    ]
    one, two, three = (d["id"] for d in listed["duplicates"])
    # The operator keeps the newer contact of the first pair: the star's other pairs follow it.
    merged = vpx(database_url, "registries", "duplicates", "merge", one, "--keep", second)
    assert (merged["kept"], merged["merged"]) == (second, first)
    assert vpx(database_url, "registries", "duplicates", "dismiss", two)["status"] == "dismissed"
    left = vpx(database_url, "registries", "duplicates")["duplicates"]
    assert [(d["id"], [c["id"] for c in d["contacts"]]) for d in left] == [(three, [second, fourth])]
    async with app.state.database.read_sessions() as session:
        gone = await session.get(Contact, number(first))
        assert gone is not None and gone.status == "merged"
