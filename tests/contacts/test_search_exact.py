"""Answers that are exact whatever is waiting to be folded in: a search applies the changes not folded
yet; past what it applies it says so (`exact: false`) and its process folds them at once, so the next
answer is exact; a word asked before it existed is found the moment a contact has it (no cache
remembers the old answer, the old plan or the old correction); bitmaps are never put together with
a view of another generation."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from fastapi import FastAPI
from pyroaring import BitMap
from sqlalchemy import text, update

from tests import factories
from tests.factories import Factory, details
from vpx.contacts.search import postings

pytestmark = pytest.mark.asyncio


async def search(client: httpx.AsyncClient, account: factories.TestAccount, q: str, **params: str) -> dict:  # type: ignore[type-arg]
    response = await client.get("/api/v1/contacts/search", params={"q": q, **params}, headers=account.headers())
    assert response.status_code == 200, response.text
    found: dict = response.json()  # type: ignore[type-arg]
    return found


async def fold_all(app: FastAPI) -> None:
    while await postings.fold_changes(app.state.database):
        pass


async def test_a_backlog_past_what_a_search_applies_is_said_and_folded_at_once(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postings.view, "PENDING_APPLIED", 20)
    account = await factory.account()
    await factory.contacts(
        [{"business_name": f"Ostrich Feather Works {i}", "city": "Tulsa", "state": "OK", "industry": "retail"}
         | details(i) for i in range(60)]
    )  # fmt: skip
    first = await search(client, account, "ostrich")
    assert first["exact"] is False  # 60 changes wait, 20 are applied
    # The process that answered folds them: the next answer is exact, and right.
    for _ in range(100):
        answer = await search(client, account, "ostrich")
        if answer["exact"]:
            break
        await asyncio.sleep(0.05)
    assert answer["exact"] is True and answer["total"] == 60


async def test_a_word_asked_before_it_existed_is_found_at_once(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    account = await factory.account()
    await factory.demo(150)
    await fold_all(app)
    questions = ["zyzzogeton", "bakerz", "quixotrix plumbing", "plumbinq"]
    added = {}
    for i, q in enumerate(questions):
        added[q] = await factory.contact(business_name=f"{q.title()} Co", **details(100 + i))
    # Pending: applied by the search itself (among the first tier: its name holds the words as typed).
    pending = {q: await search(client, account, q, limit="100") for q in questions}
    await fold_all(app)
    for q in questions:
        assert added[q] in {c["id"] for c in pending[q]["contacts"]}, q
        # Folded: the postings hold it, and the answer is the same.
        assert await search(client, account, q, limit="100") == pending[q], q


async def test_a_typo_corrected_before_a_word_existed_is_read_as_the_word_after(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory
) -> None:
    """ "Sawyerz" corrected to "sawyer" until a business is named "Sawyerz": then it is a word of the
    catalogue, matched as typed, and no longer a typo (at once, pending, and after the fold)."""
    account = await factory.account()
    await factory.contact(business_name="Sawyer Lumber", **details(1))
    await fold_all(app)
    assert (await search(client, account, "sawyerz"))["total"] == 1  # read as sawyer
    await factory.contact(business_name="Sawyerz Grill", **details(2))
    pending = await search(client, account, "sawyerz")
    await fold_all(app)
    folded = await search(client, account, "sawyerz")
    assert [c["business_name"] for c in pending["contacts"]] == ["Sawyerz Grill"]
    assert folded["contacts"] == pending["contacts"] and folded["total"] == pending["total"] == 1


async def test_bitmaps_of_another_generation_are_read_again(app: FastAPI, factory: Factory) -> None:
    """A fold that commits between a search's view and its bitmaps: the search reads both again."""
    from vpx.contacts.search import SearchQuery

    backend = app.state.search
    await factory.contacts([{"business_name": "Kestrel Optics", "city": "Reno", "state": "NV", "industry": "retail"}])
    reads = 0
    original = postings.read_postings

    async def read_then_fold(reader, exact, prefixes):  # type: ignore[no-untyped-def]
        nonlocal reads
        reads += 1
        if reads == 1:  # the first read of bitmaps: a fold commits just before it
            await fold_all(app)
        return await original(reader, exact, prefixes)

    postings.read_postings = read_then_fold  # type: ignore[assignment]
    try:
        async with app.state.database.read_engine.connect() as connection:
            page = await backend.search(connection, SearchQuery(text="kestrel"))
    finally:
        postings.read_postings = original  # type: ignore[assignment]
    assert page.total == 1 and page.exact
    assert reads >= 2
    async with app.state.database.read_sessions() as session:
        assert await session.scalar(text("SELECT count(*) FROM search_changes")) == 0


async def test_a_view_carried_from_the_last_one_equals_one_worked_out_afresh(app: FastAPI, factory: Factory) -> None:
    """Each search's view of the changes waiting takes what it shares with the previous one (terms,
    ids by term, sorted terms) instead of working it out again: always the same as from scratch."""
    import random

    from vpx.models import Contact

    database = app.state.database
    ids = [int(c.removeprefix("ct_")) for c in await factory.demo(120)]
    await fold_all(app)
    rng = random.Random(4)
    for step in range(12):
        async with database.write_sessions() as session, session.begin():
            for contact_id in rng.sample(ids, 6):
                name = rng.choice(["Otter Bakery", "Otter Dental", "Heron Roofing", "Heron Bakery"])
                await session.execute(
                    update(Contact).where(Contact.id == contact_id).values(business_name=f"{name} {step}")
                )
        if step % 4 == 3:  # a fold now and then: contacts leave the view
            async with database.writer_turn(), database.write_sessions() as session, session.begin():
                await postings.merge(session, limit=5)
        async with database.read_engine.connect() as connection:
            view = await postings.read_view(connection)
            rows = list(await connection.execute(postings._VIEW, {"limit": postings.PENDING_APPLIED + 1}))
        fresh = postings._view_of(rows)
        assert view.pending == fresh.pending
        assert view.by_term == fresh.by_term and view.sorted_terms == fresh.sorted_terms
        assert view.having_prefix("n:otter") == fresh.having_prefix("n:otter")


def test_a_term_that_leaves_and_comes_back_stays_in_the_carried_view() -> None:
    """A term whose last holder left it while a contact that took it came in (one question's view
    after another's, or another catalogue's after a wipe) is still in the view's sorted terms: its
    prefix finds that contact (it was missing, and a question's total differed folded and not)."""
    earlier = postings.View(generation=1, pending={1: frozenset({"n:otter", "#a"})})
    assert earlier.sorted_terms == ["#a", "n:otter"]
    for pending in ({1: frozenset({"#a"}), 2: frozenset({"n:otter", "#a"})}, {2: frozenset({"n:otter"})}):
        view = postings.View(generation=1, pending=pending)
        postings._carry_index(view, earlier)
        fresh = postings.View(generation=1, pending=pending)
        assert view.by_term == fresh.by_term and view.sorted_terms == fresh.sorted_terms
        assert view.having_prefix("n:ott") == BitMap([2])
