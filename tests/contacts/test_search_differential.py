"""Search against an oracle evaluated on the contacts table, while the catalogue changes through the
product's real paths (registry imports, contributions, renames, moves, deactivations and
reactivations, email checks, merges, suppressions), with folds and searches running at the same time
and, on PostgreSQL, a real `vpx worker` killed with SIGKILL while it holds the folds' lock.

After each round, every answer of a couple of hundred generated questions (words, prefixes, typos,
filters, paging) is compared three ways: as served with the changes still waiting (applied by the
search), as served once every change is folded in, and as the oracle gives it: the same planning of
the question over postings built from the table at that moment. A second test runs one seeded
sequence of changes on both databases and compares what they answer.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pyroaring import BitMap
from sqlalchemy import select, text, update

from tests import factories
from tests.conftest import (
    START,
    TEST_SECRET_KEY,
    create_postgres_database,
    drop_postgres_database,
    migrate,
    test_settings,
)
from tests.factories import Factory
from tests.registries.formats import write_nppes, write_nucc
from vpx.app import create_app
from vpx.clock import FixedClock
from vpx.contacts.normalise import words
from vpx.contacts.search import SearchQuery, postings
from vpx.contacts.search.corrections import one_edit
from vpx.contacts.search.engine import BaseBackend
from vpx.contacts.search.matching import Terms
from vpx.db import Database
from vpx.models import Contact
from vpx.registries import duplicates, importer
from vpx.registries.sources import all_sources
from vpx.suppression import service as suppression_service

pytestmark = pytest.mark.asyncio
STATES = ("CO", "TX", "CA", "NY", "FL")
STATUSES = ("valid_syntax", "no_mx", "mx_found", "bounced")
DEMO = 400  # the demo contacts' ids: 1 to 400


class Oracle:
    """The engine's own planning of a question over postings built from the table (no stored
    postings, nothing pending): what a correct index answers."""

    def __init__(self, backend: BaseBackend, built: dict[str, BitMap]) -> None:
        self.backend = type(backend)(backend.vocabulary)
        self.backend.database = backend.database
        self.built = built

        async def read(session: Any, view: postings.View, exact: set[str], prefixes: set[str]) -> Terms:
            terms = Terms()
            for term in exact:
                terms.exact[term] = self.built.get(term, BitMap())
            for prefix in prefixes:
                found = [bitmap for term, bitmap in self.built.items() if term.startswith(prefix)]
                terms.prefixed[prefix] = BitMap.union(*found) if found else BitMap()
            return terms

        self.backend._read = read  # type: ignore[method-assign]

    async def ask(self, database: Database, query: SearchQuery) -> tuple[int, list[int]]:
        async with database.read_engine.connect() as connection:
            page = await self.backend.search(connection, query)
        return page.total, [row.id for row in page.rows]


async def built_from_table(database: Database) -> dict[str, BitMap]:
    async with database.read_sessions() as session:
        rows = list(await session.execute(postings._CONTACTS_FROM, {"low": 0, "high": 2**32}))
    built: dict[str, BitMap] = {}
    for _, bitmaps in postings.build_chunks(rows):
        for term, bitmap in bitmaps.items():
            built.setdefault(term, BitMap()).update(bitmap)
    return built


async def served(app: FastAPI, query: SearchQuery) -> tuple[int, list[int], bool]:
    async with app.state.database.read_engine.connect() as connection:
        page = await app.state.search.search(connection, query)
    return page.total, [row.id for row in page.rows], page.exact


async def fold_all(database: Database) -> None:
    while await postings.fold_changes(database):
        pass


async def questions(database: Database, rng: random.Random, count: int) -> list[SearchQuery]:
    """Words of the catalogue's names as typed, as prefixes and with a typo, alone or with a filter,
    some on a second page; and filters alone."""
    async with database.read_sessions() as session:
        names = [row[0] for row in await session.execute(select(Contact.business_name).order_by(Contact.id))]
    vocabulary = sorted({word for name in names for word in words(name) if len(word) >= 4 and word.isalpha()})
    found: list[SearchQuery] = []
    while len(found) < count:
        word = rng.choice(vocabulary)
        kind = rng.random()
        if kind < 0.3:
            asked = word
        elif kind < 0.55:
            asked = word[: rng.randint(2, max(2, len(word) - 1))]
        elif kind < 0.8:
            asked = rng.choice(sorted(one_edit(word)))
        else:
            asked = f"{word} {rng.choice(vocabulary)}"
        filters: dict[str, Any] = {}
        if rng.random() < 0.3:
            filters["state"] = rng.choice(STATES)
        if rng.random() < 0.15:
            filters["email_status"] = rng.choice(STATUSES)
        found.append(SearchQuery(text=asked, limit=25, offset=25 if rng.random() < 0.2 else 0, **filters))
    found += [SearchQuery(state=state, limit=10) for state in STATES]
    found += [SearchQuery(email_status=status, limit=10) for status in STATUSES]
    return found


def nppes_rows(rng: random.Random, round_: int, count: int) -> list[dict[str, str]]:
    """Doctors: new ones, and (from the second round on) the earlier rounds' renamed or moved."""
    rows = []
    for i in range(count):
        past = round_ > 0 and i < count // 2
        number = (round_ - 1 if past else round_) * 100 + i
        city, state = rng.choice([("SPOKANE", "WA"), ("DENVER", "CO"), ("AUSTIN", "TX"), ("FRESNO", "CA")])
        rows.append(
            {
                "npi": str(1500000000 + number),
                "entity": "1",
                "last": rng.choice(["NAKAMURA", "OKAFOR", "LINDQVIST", "BRENNAN", "ZAVALA"]) + chr(65 + i % 26),
                "first": rng.choice(["KENJI", "ADA", "MARTA", "OWEN"]),
                "credential": "MD",
                "street": f"{number} ELM AVE",
                "city": city,
                "state": state,
                "zip": "80202",
                "country": "US",
                "phone": f"30355{number:05d}",
                "taxonomy1": rng.choice(["207RC0000X", "207Q00000X", "1223G0001X"]),
                "licence1": f"MD{number:06d}",
                "licence_state1": state,
                "switch1": "Y",
            }
        )
    return rows


async def mutate(
    app: FastAPI, factory: Factory, client: httpx.AsyncClient, contributor: factories.TestAccount, rng: random.Random,
    round_: int, tmp: Path,
) -> None:  # fmt: skip
    """One round of changes through the product's paths, several at the same time."""
    database: Database = app.state.database
    async with database.read_sessions() as session:
        ids = [int(i) for i in await session.scalars(select(Contact.id).where(Contact.status == "active"))]
    rng.shuffle(ids)

    async def imports() -> None:
        path = write_nppes(tmp / f"nppes-{round_}.csv", nppes_rows(rng, round_, 12))
        source = all_sources()["nppes"]()
        await importer.run_import(database, source, path, file_date=date(2026, 11, 1 + round_), now=START)

    async def contributions() -> None:
        rows = [
            {"business_name": f"{rng.choice(['Harbor', 'Summit', 'Juniper'])} Tile Works {round_}-{i}",
             "phone": f"+1720555{round_:02d}{i:02d}", "city": "Boulder", "state": "CO", "industry": "home-services",
             "email": f"owner{round_}{i}@tile{round_}{i}.example"}
            for i in range(8)
        ]  # fmt: skip
        answer = await client.post(
            "/api/v1/contacts/contribute", json={"contacts": rows}, headers=contributor.headers()
        )
        assert answer.status_code == 200, answer.text

    async def edits() -> None:
        for contact_id in ids[:8]:  # renames
            await factory.rename(f"ct_{contact_id}", f"Quillon {rng.choice(['Bakery', 'Dental', 'Roofing'])} {round_}")
        for contact_id in ids[8:14]:  # moves
            async with database.write_sessions() as session, session.begin():
                await session.execute(
                    update(Contact).where(Contact.id == contact_id).values(city="Pueblo", state=rng.choice(STATES))
                )
        for contact_id in ids[14:18]:  # deactivations, and some back
            await factory.deactivate(f"ct_{contact_id}")
        for contact_id in ids[14:16]:
            async with database.write_sessions() as session, session.begin():
                await session.execute(update(Contact).where(Contact.id == contact_id).values(status="active"))
        for contact_id in ids[
            :40
        ]:  # email checks (renamed and moved ones too): syntax first, then the domain's answer, as the worker does
            for status in ("valid_syntax", rng.choice(STATUSES)):
                async with database.write_sessions() as session, session.begin():
                    await session.execute(
                        update(Contact)
                        .where(Contact.id == contact_id, Contact.email.is_not(None))
                        .values(email_status=status)
                    )
                await asyncio.sleep(0.002)

    async def merges_and_suppressions() -> None:
        # Two of the demo's contacts: a merge takes locks across tables that a concurrent import of the
        # same contacts takes in another order (PostgreSQL then aborts one of the two; left alone).
        kept, gone = [i for i in ids[40:] if i <= DEMO][:2]
        async with database.write_sessions() as session, session.begin():
            await duplicates.record(
                session, [duplicates.HeldPair(min(kept, gone), max(kept, gone), "test", 90)], found_by="test", now=START
            )
        async with database.read_sessions() as session:
            pair_id = await session.scalar(text("SELECT max(id) FROM possible_duplicates"))
        async with database.write_sessions() as session, session.begin():
            await duplicates.merge(session, f"pd_{pair_id}", by="cli:test", now=START)
        async with database.write_sessions() as session, session.begin():
            contact = await session.get(Contact, ids[42])
            assert contact is not None
            kind, value = ("phone", contact.phone) if contact.phone else ("contact", f"ct_{ids[42]}")
            await suppression_service.add_suppression(
                session,
                kind=suppression_service.SuppressionKind(kind),
                value=value,
                reason=suppression_service.SuppressionReason.opt_out,
                note="",
                now=START,
            )

    stop = asyncio.Event()

    async def folding() -> None:
        while not stop.is_set():
            async with database.writer_turn(), database.bulk_write_sessions() as session, session.begin():
                await postings.merge(session, limit=rng.choice((3, 17, 60)))
            await asyncio.sleep(0)

    async def searching() -> None:
        while not stop.is_set():
            await served(app, SearchQuery(text=rng.choice(["tile", "quillon", "dental", "nakamura"])))
            await asyncio.sleep(0)

    background = [asyncio.create_task(folding()), asyncio.create_task(searching())]
    try:
        await asyncio.gather(imports(), contributions(), edits(), merges_and_suppressions())
    finally:
        stop.set()
        await asyncio.gather(*background)


async def compare(app: FastAPI, rng: random.Random, count: int) -> int:
    """Served with changes waiting == served folded == the oracle, for every question; how many."""
    database: Database = app.state.database
    asked = await questions(database, rng, count)
    waiting = [await served(app, query) for query in asked]
    async with database.read_sessions() as session:
        view = await postings.read_view(session)
        changes = list(await session.execute(text("SELECT * FROM search_changes ORDER BY seq")))
    assert all(exact for _, _, exact in waiting)
    await fold_all(database)
    folded = [await served(app, query) for query in asked]
    oracle = Oracle(app.state.search, await built_from_table(database))
    for query, before, after in zip(asked, waiting, folded, strict=True):
        expected = await oracle.ask(database, query)
        if before[:2] != expected:
            missing = set(expected[1]) - set(before[1])
            detail: dict[Any, Any] = {
                i: (view.pending.get(i), [tuple(c) for c in changes if c.contact_id == i]) for i in missing
            }
            for word in words(query.text or ""):
                near = sorted(one_edit(word))
                async with database.read_engine.connect() as connection:
                    known = await app.state.search.known_words(connection, near)
                    prefixed = await app.state.search.has_prefix(connection, word)
                detail[word] = {
                    "pending_near": sorted(set(near) & view.words),
                    "pending_prefixed": sorted(w for w in view.words if w.startswith(word)),
                    "db_near_after": sorted(known),
                    "db_prefixed_after": prefixed,
                }
            raise AssertionError((query, before, after, expected, detail, view.generation, len(view.pending)))
        assert before[:2] == after[:2] == expected, (query, before, after, expected)
    return len(asked)


def start_worker(database_url: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "VPX_DATABASE_URL": database_url,
        "VPX_SECRET_KEYS": TEST_SECRET_KEY,
        "VPX_WORKER_POLL_SECONDS": "0.05",
        "VPX_MX_LOOKUPS_PER_SECOND": "0",
        "VPX_LOG_LEVEL": "ERROR",
    }
    command = [str(Path(sys.executable).parent / "vpx"), "worker", "--json"]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def kill_mid_fold(database: Database, database_url: str) -> bool:
    """A real worker folds a backlog and is killed (SIGKILL) while it holds the folds' lock;
    whether it was caught holding it."""
    async with database.write_sessions() as session, session.begin():
        for status in STATUSES:  # a backlog: every email's status, four times over
            await session.execute(update(Contact).where(Contact.email.is_not(None)).values(email_status=status))
    worker = start_worker(database_url)
    caught = False
    try:
        for _ in range(400):
            async with database.read_sessions() as session:
                held = await session.scalar(
                    text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 7372461")
                )
            if held:
                worker.send_signal(signal.SIGKILL)
                caught = True
                break
            await asyncio.sleep(0.01)
    finally:
        if worker.poll() is None:
            worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
    return caught


async def test_search_answers_equal_an_oracle_on_the_table_through_every_kind_of_change(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, backend: str, database_url: str, tmp_path: Path
) -> None:
    rng = random.Random(20261129)
    database: Database = app.state.database
    await importer.run_import(database, all_sources()["nucc"](), write_nucc(tmp_path / "nucc.csv"), now=START)
    await factory.demo(DEMO)
    contributor = await factory.account(credits=10, name="contributor")
    asked = 0
    for round_ in range(3):
        await mutate(app, factory, client, contributor, rng, round_, tmp_path)
        if backend == "postgresql" and round_ == 1:
            await kill_mid_fold(database, database_url)
        asked += await compare(app, rng, 90)
    assert asked >= 250


async def test_sqlite_and_postgresql_answer_the_same(tmp_path: Path) -> None:
    """One seeded catalogue and sequence of changes on both databases: the same answers (by name, city
    and state: the databases may number rows differently)."""
    from tests.conftest import _postgres_reachable

    reason = await _postgres_reachable()
    if reason:
        pytest.skip(reason)
    urls = {"sqlite": f"sqlite+aiosqlite:///{tmp_path}/same.db", "postgresql": await create_postgres_database()}
    answers: dict[str, list[Any]] = {}
    try:
        for backend, url in urls.items():
            await asyncio.to_thread(migrate, url)
            app = create_app(test_settings(url), clock=FixedClock(START))
            factory = Factory(app, FixedClock(START))
            rng = random.Random(7)
            await factory.demo(300, seed=3)
            for contact_id in range(1, 40, 3):
                await factory.rename(f"ct_{contact_id}", f"Quillon Roofing {contact_id}")
            async with app.state.database.write_sessions() as session, session.begin():
                await session.execute(update(Contact).where(Contact.id % 7 == 0).values(email_status="mx_found"))
                await session.execute(update(Contact).where(Contact.id % 11 == 0).values(status="deactivated"))
            asked = await questions(app.state.database, rng, 120)
            found = []
            for query in asked:
                total, ids, _ = await served(app, query)
                async with app.state.database.read_sessions() as session:
                    rows = {
                        row.id: (row.business_name, row.city, row.state)
                        for row in await session.execute(
                            select(Contact.id, Contact.business_name, Contact.city, Contact.state).where(
                                Contact.id.in_(ids or [0])
                            )
                        )
                    }
                found.append((total, [rows[i] for i in ids]))
            answers[backend] = found
            await app.state.database.dispose()
    finally:
        await drop_postgres_database(urls["postgresql"])
    assert answers["sqlite"] == answers["postgresql"]
