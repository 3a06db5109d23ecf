"""An index that checks itself: `vpx search check` (the real command) finds terms the postings got
wrong (an id left in a term, an id missing from one), prints them with their ids, exits 1, and with
--repair rewrites them; a sample finds them too; contacts whose changes wait to be folded are left
out; the worker's scheduled check logs, repairs and records what it found, which /metrics and
`vpx status --json` show."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pyroaring import BitMap
from sqlalchemy import text, update

from tests.factories import Factory
from tests.test_cli import vpx
from vpx.contacts.search import checks, postings
from vpx.db import Database
from vpx.models import Contact
from vpx.worker.loop import Worker

pytestmark = pytest.mark.asyncio


async def fold_all(database: Database) -> None:
    while await postings.fold_changes(database):
        pass


async def corrupt(database: Database, term: str, *, add: int | None = None, remove: int | None = None) -> None:
    """Writes around the index: an id put into, or taken out of, a term's stored bitmap."""
    chunk = postings.chunk_of(add if add is not None else remove or 0)
    async with database.write_sessions() as session, session.begin():
        blob = await session.scalar(
            text("SELECT ids FROM search_postings WHERE term = :term AND chunk = :chunk"),
            {"term": term, "chunk": chunk},
        )
        bitmap = BitMap.deserialize(bytes(blob)) if blob is not None else BitMap()
        if add is not None:
            bitmap.add(add)
        if remove is not None:
            bitmap.discard(remove)
        await session.execute(
            text(
                "INSERT INTO search_postings (term, chunk, ids, size) VALUES (:term, :chunk, :ids, :size) "
                "ON CONFLICT (term, chunk) DO UPDATE SET ids = excluded.ids, size = excluded.size"
            ),
            {"term": term, "chunk": chunk, "ids": bytes(bitmap.serialize()), "size": len(bitmap)},
        )


async def some_terms(database: Database, contact_id: int) -> frozenset[str]:
    async with database.read_sessions() as session:
        row = (
            await session.execute(
                text(
                    "SELECT id, business_name, specialty, license_type, industry, city, state, status, suppressed, "
                    "email_status FROM contacts WHERE id = :id"
                ),
                {"id": contact_id},
            )
        ).one()
    return postings.terms_of(row)


async def test_the_command_finds_wrong_terms_and_repairs_them(
    app: FastAPI, factory: Factory, database_url: str
) -> None:
    database: Database = app.state.database
    ids = [int(c.removeprefix("ct_")) for c in await factory.demo(300)]
    await fold_all(database)
    clean = await asyncio.to_thread(vpx, database_url, "search", "check")
    assert clean["mismatched_terms"] == 0 and clean["checked_contacts"] == 300 and clean["checked_terms"] > 300

    word = sorted(t for t in await some_terms(database, ids[5]) if t.startswith("n:"))[0]
    await corrupt(database, "#em:valid_syntax", add=ids[0])  # a status the contact no longer has
    await corrupt(database, word, remove=ids[5])  # a word of its name, lost
    found = await asyncio.to_thread(vpx, database_url, "search", "check", check=False)
    assert found["mismatched_terms"] == 2 and found["repaired"] == 0
    wrong = {m["term"]: m for m in found["mismatches"]}
    assert wrong["#em:valid_syntax"]["extra"] == [ids[0]] and wrong[word]["missing"] == [ids[5]]

    repaired = await asyncio.to_thread(vpx, database_url, "search", "check", "--repair")
    assert repaired["mismatched_terms"] == 2 and repaired["repaired"] == 2
    again = await asyncio.to_thread(vpx, database_url, "search", "check")
    assert again["mismatched_terms"] == 0


async def test_a_sample_finds_them_and_changes_waiting_are_left_out(app: FastAPI, factory: Factory) -> None:
    database: Database = app.state.database
    ids = [int(c.removeprefix("ct_")) for c in await factory.demo(200)]
    await fold_all(database)
    await corrupt(database, "#st:zz", add=ids[3])
    # Every contact sampled: the stale filter term is found.
    report = await checks.check_sample(database, contacts=200, rows=0, rng=random.Random(1))
    assert [(m.term, list(m.extra)) for m in report.mismatches] == [("#st:zz", [ids[3]])]
    # A rename waiting to be folded in: the postings still hold the old name, and that is no fault.
    async with database.write_sessions() as session, session.begin():
        await session.execute(update(Contact).where(Contact.id == ids[7]).values(business_name="Renamed Quokka Co"))
    report = await checks.check_all(database)
    assert {m.term for m in report.mismatches} == {"#st:zz"} and report.waiting_contacts == 1
    assert await checks.repair(database, report.mismatches) == 1
    assert (await checks.check_all(database)).mismatches == []


async def test_random_rows_find_a_stale_word(app: FastAPI, factory: Factory) -> None:
    database: Database = app.state.database
    ids = [int(c.removeprefix("ct_")) for c in await factory.demo(50)]
    await fold_all(database)
    await corrupt(database, "n:aaaaquokka", add=ids[1])  # the first word a probe from "n:a…" reaches

    class Aimed(random.Random):
        """Probes that start at "n:aaa": the first row they reach is the stale word's."""

        def choice(self, seq):  # type: ignore[no-untyped-def, override]
            return "n:" if "n:" in seq else super().choice(seq)

        def choices(self, population, weights=None, *, cum_weights=None, k=1):  # type: ignore[no-untyped-def, override]
            return ["a"] * k

    report = await checks.check_sample(database, contacts=1, rows=3, rng=Aimed(2))
    stale = [m for m in report.mismatches if m.term == "n:aaaaquokka"]
    assert stale and list(stale[0].extra) == [ids[1]]


async def test_the_workers_check_logs_repairs_and_records(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    database: Database = app.state.database
    ids = [int(c.removeprefix("ct_")) for c in await factory.demo(100)]
    await fold_all(database)
    await corrupt(database, "#em:no_mx", add=ids[2])
    settings = app.state.settings.model_copy(update={"search_check_seconds": 60.0, "search_check_sample": 100})
    worker = Worker(database, settings, clock=app.state.clock)
    with caplog.at_level("WARNING", logger="vpx.worker"):
        await worker._search_check()
        await worker._search_check()  # within its interval: nothing more
    logged = [r for r in caplog.records if "search index term wrong" in r.getMessage()]
    assert len(logged) == 1
    assert (await checks.check_all(database)).mismatches == []
    metrics = (await client.get("/metrics")).text
    assert "vpx_search_index_mismatches 1.0" in metrics and "vpx_search_waiting_changes 0.0" in metrics
    status: dict[str, Any] = await asyncio.to_thread(vpx, database_url, "status", check=False)
    last = status["search_index"]["last_check"]
    assert last["mismatched_terms"] == 1 and last["repaired"] == 1 and status["search_index"]["waiting_changes"] == 0
