"""What each search question costs when no process has answered it yet: the 40 searches of
`bench/wrk/search.lua`, without a state and with CA, asked once each in sequence, in process, each
on a fresh search backend (nothing remembered: no bitmaps, no corrections, no answers). Prints the
percentiles, the slowest and the sum, per database.

    .venv/bin/python -m bench.catalogue_build [--count 10000000]   # once: the catalogues
    .venv/bin/python -m bench.search_questions [--count 10000000] [--backends sqlite,postgresql]

The cold-start figure of `bench/http_load.py` is these costs, each paid by every server process and
queued behind one another on the machine's cores.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import time
from pathlib import Path

from bench.common import catalogue_urls, percentile
from vpx.config import Settings
from vpx.contacts.search import SearchQuery, backend_for
from vpx.db import Database

SCRIPT = Path(__file__).resolve().parent / "wrk" / "search.lua"


def questions() -> list[str]:
    """The words of the wrk script, so that both benchmarks ask the same."""
    block = re.search(r"local words = \{(.*?)\}", SCRIPT.read_text(), re.S)
    assert block is not None
    return re.findall(r'"([^"]+)"', block.group(1))


async def measure(url: str, show: int) -> None:
    database = Database(Settings(database_url=url))
    # What a server process reads once at start (refresh_from): the ZIP code list of places.
    backend_for(database.dialect).refresh_from(database)
    timings = []
    for state in (None, "CA"):
        for words in questions():
            query = SearchQuery(text=words, state=state)
            backend = backend_for(database.dialect)  # nothing remembered
            async with database.read_engine.connect() as connection:
                started = time.perf_counter()
                page = await backend.search(connection, query)
                timings.append((time.perf_counter() - started, words, state, page.total))
    await database.dispose()
    timings.sort(reverse=True)
    seconds = sorted(t for t, *_ in timings)
    print(
        f"{database.dialect}: {len(timings)} questions, {sum(seconds):.2f} s in all; "
        f"p50 {percentile(seconds, 50) * 1000:.1f} ms, p99 {percentile(seconds, 99) * 1000:.1f} ms, "
        f"max {seconds[-1] * 1000:.1f} ms"
    )
    for seconds, words, state, total in timings[:show]:
        print(f"  {seconds * 1000:7.1f} ms  {words!r:<18} {state or 'all states':<11} {total:>7,} matches")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--show", type=int, default=8, help="how many of the slowest to list")
    parser.add_argument("--count", type=int, default=1_000_000, help="which catalogue (its size)")
    args = parser.parse_args()
    urls = catalogue_urls(args.count)
    for backend in args.backends.split(","):
        asyncio.run(measure(urls[backend], args.show))


if __name__ == "__main__":
    main()
