"""How soon a change is found by search, how search answers while the postings fold, and whether folds
keep up, under a steady write load, on SQLite or PostgreSQL:

    .venv/bin/python -m bench.search_freshness [--database sqlite|postgresql] [--contacts 1000000]
        [--rate 200] [--batch 1] [--seconds 30]

On the catalogue of bench/search_folds.py (``vpx_bench_folds``, built there), three processes: a real
`vpx worker` folding; a writer renaming contacts at --rate changes a second (--batch per transaction),
each rename giving the contact a word of its own; and a searcher that, for each change, asks for its
word until the contact is found (freshness: from the change's commit to the first answer that has it),
and meanwhile asks the 40 questions of bench/wrk/search.lua, 50 a second (one backend, as a server process
keeps it). First for 10 s with no writes (the baseline), then with the writes.

Printed: freshness p50/p99/max, the questions' answer times quiet and under the load, the backlog
(changes waiting) sampled each 0.5 s, and the changes written and folded per second. Goals: found
within 1 s at p99 at 200 changes/s; folds that keep up with 2,000 changes/s.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import random
import subprocess
import sys
import time
from multiprocessing.connection import Connection
from pathlib import Path

from cryptography.fernet import Fernet
from sqlalchemy import text

from bench.common import percentile, postgres_url, sqlite_url
from bench.search_questions import questions
from vpx.config import Settings
from vpx.contacts.search import SearchQuery, backend_for
from vpx.contacts.search.postings import fold_backlog
from vpx.db import Database

DB_NAME = "vpx_bench_folds"
ASK_EVERY = 0.02


def url_of(backend: str) -> str:
    return sqlite_url(DB_NAME) if backend == "sqlite" else postgres_url(DB_NAME)


def token(n: int) -> str:
    """A word no contact has: letters only (digits would be their own words)."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    word = ""
    while True:
        n, rest = divmod(n, 26)
        word += letters[rest]
        if n == 0:
            break
    return "frsh" + word


# --- the writer ---------------------------------------------------------------------------------


def write(url: str, rate: float, batch: int, seconds: float, contacts: int, probe: int, pipe: Connection) -> None:
    asyncio.run(_write(url, rate, batch, seconds, contacts, probe, pipe))


async def _write(
    url: str, rate: float, batch: int, seconds: float, contacts: int, probe: int, pipe: Connection
) -> None:
    database = Database(Settings(database_url=url))
    rng = random.Random(5)
    statement = text("UPDATE contacts SET business_name = :name WHERE id = :id")
    started = time.monotonic()
    sent = 0
    n = int(time.time()) % 100_000 * 1000
    while time.monotonic() - started < seconds:
        due = started + sent / rate
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        changes = []
        for _ in range(batch):
            n += 1
            changes.append({"id": rng.randint(1, contacts), "name": f"Fresh {token(n)} Works"})
        async with database.writer_turn(), database.write_sessions() as session, session.begin():
            await session.execute(statement, changes)
        committed = time.time()
        if (sent // batch) % probe == 0:  # the prober looks for a change of every probe-th transaction
            pipe.send([(c["name"].split()[1], c["id"], committed) for c in changes[:1]])
        sent += batch
    pipe.send(None)
    pipe.send(sent)
    await database.dispose()


# --- the prober and the asker (processes of their own: neither waits on the other) -------------


def probe(url: str, pipe: Connection, results: Connection) -> None:
    asyncio.run(_probe(url, pipe, results))


async def _probe(url: str, pipe: Connection, results: Connection) -> None:
    """For each change the writer sends, its word asked until the contact is found."""
    database = Database(Settings(database_url=url))
    backend = backend_for(database.dialect).refresh_from(database)
    freshness: list[float] = []
    missed = 0
    loop = asyncio.get_running_loop()
    while (changes := await loop.run_in_executor(None, pipe.recv)) is not None:
        for word, contact_id, committed in changes:
            deadline = time.time() + 10
            while True:
                async with database.read_engine.connect() as connection:
                    page = await backend.search(connection, SearchQuery(text=word, limit=5))
                if any(row.id == contact_id for row in page.rows):
                    freshness.append(time.time() - committed)
                    break
                if time.time() > deadline:
                    missed += 1
                    break
    written = await loop.run_in_executor(None, pipe.recv)
    results.send((freshness, missed, written))
    await database.dispose()


def ask(url: str, quiet: float, control: Connection) -> None:
    asyncio.run(_ask(url, quiet, control))


async def _ask(url: str, quiet: float, control: Connection) -> None:
    """The 40 questions over and over on one backend: for ``quiet`` seconds, then until told to stop."""
    database = Database(Settings(database_url=url))
    backend = backend_for(database.dialect).refresh_from(database)
    asked = questions()
    timings: list[list[float]] = [[], []]
    phase, ends, i = 0, time.monotonic() + quiet, 0
    while True:
        if phase == 0 and time.monotonic() > ends:
            control.send("quiet done")
            phase = 1
        if phase == 1 and control.poll():
            break
        started = time.perf_counter()
        async with database.read_engine.connect() as connection:
            await backend.search(connection, SearchQuery(text=asked[i % len(asked)], state="CA" if i % 2 else None))
        took = time.perf_counter() - started
        timings[phase].append(took)
        i += 1
        await asyncio.sleep(max(0.0, ASK_EVERY - took))  # a steady 50 questions a second, not a flood
    control.recv()
    control.send(timings)
    await database.dispose()


# --- the backlog --------------------------------------------------------------------------------


async def backlog_samples(url: str, until: asyncio.Event, into: list[int]) -> None:
    database = Database(Settings(database_url=url), pool=False)
    while not until.is_set():
        async with database.read_sessions() as session:
            into.append(int(await session.scalar(text("SELECT count(*) FROM search_changes")) or 0))
        await asyncio.sleep(0.5)
    await database.dispose()


def start_worker(url: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "VPX_DATABASE_URL": url,
        "VPX_SECRET_KEYS": Fernet.generate_key().decode(),
        "VPX_MX_LOOKUPS_PER_SECOND": "0",
        "VPX_SEARCH_CHECK_SECONDS": "0",
        "VPX_LOG_LEVEL": "WARNING",
    }
    return subprocess.Popen(
        [str(Path(sys.executable).with_name("vpx")), "worker"], env=env, stdout=subprocess.DEVNULL, stderr=None
    )


def ms(values: list[float]) -> str:
    shown = [v * 1000 for v in values]
    return f"p50 {percentile(shown, 50):.1f} ms, p99 {percentile(shown, 99):.1f} ms, max {max(shown):.1f} ms"


async def prepare(url: str) -> int:
    """The catalogue as a running service has it: every email checked, nothing waiting to be folded
    (the worker's first checks of a new catalogue are a load of their own, not this one)."""
    database = Database(Settings(database_url=url), pool=False)
    async with database.write_sessions() as session, session.begin():
        await session.execute(
            text(
                "UPDATE contacts SET email_checked_at = updated_at, email_status = 'no_mx' "
                "WHERE email IS NOT NULL AND email_checked_at IS NULL"
            )
        )
    await fold_backlog(database)
    async with database.read_sessions() as session:
        contacts = int(await session.scalar(text("SELECT max(id) FROM contacts")) or 0)
    await database.dispose()
    return contacts


async def run(args: argparse.Namespace) -> None:
    url = url_of(args.database)
    contacts = await prepare(url)
    if not contacts:
        raise SystemExit("no catalogue: run bench/search_folds.py first")
    worker = start_worker(url)
    context = multiprocessing.get_context("spawn")
    to_prober, from_writer = context.Pipe()
    probe_results, probe_out = context.Pipe()
    asker_control, asker_end = context.Pipe()
    prober = context.Process(target=probe, args=(url, from_writer, probe_out))
    asker = context.Process(target=ask, args=(url, 10.0, asker_end))
    writer = context.Process(
        target=write, args=(url, args.rate, args.batch, args.seconds, contacts, args.probe, to_prober)
    )
    samples: list[int] = []
    until = asyncio.Event()
    sampler = asyncio.create_task(backlog_samples(url, until, samples))
    loop = asyncio.get_running_loop()
    try:
        prober.start()
        asker.start()
        await loop.run_in_executor(None, asker_control.recv)  # the quiet baseline is done
        started = time.monotonic()
        writer.start()
        freshness, missed, written = await loop.run_in_executor(None, probe_results.recv)
        elapsed = time.monotonic() - started
        asker_control.send("stop")
        quiet, busy = await loop.run_in_executor(None, asker_control.recv)
        for process in (writer, prober, asker):
            process.join()
    finally:
        until.set()
        await sampler
        worker.terminate()
        worker.wait(timeout=30)
    print(
        f"{args.database}, {contacts:,} contacts: {written:,} renames asked at {args.rate:g}/s "
        f"({args.batch} a transaction), {written / elapsed:,.0f}/s written over {elapsed:.1f} s"
    )
    print(f"found by search after its commit: {ms(freshness)} ({len(freshness)} asked); never found: {missed}")
    print(f"the 40 questions, quiet: {ms(quiet)} ({len(quiet)} answers)")
    print(f"the 40 questions, while writing and folding: {ms(busy)} ({len(busy)} answers)")
    print(f"changes waiting, each 0.5 s: max {max(samples)}, p50 {percentile([float(s) for s in samples], 50):.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--rate", type=float, default=200.0, help="changes a second")
    parser.add_argument("--batch", type=int, default=1, help="changes a transaction")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument(
        "--probe", type=int, default=10, help="look for a change of every n-th transaction (the prober keeps up)"
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
