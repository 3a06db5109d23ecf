"""Builds the seeded 1,000,000-contact demo catalogue on SQLite and PostgreSQL, times it and says its
size on disk.

    .venv/bin/python -m bench.catalogue_build [--count 1000000] [--backends sqlite,postgresql]

Goal: under 2 minutes. The databases are kept (var/bench/catalogue.db and the PostgreSQL
database vpx_bench_catalogue) for bench/http_load.py.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import time
from datetime import UTC, datetime

from sqlalchemy import func, select, text

from bench.common import catalogue_name, fresh_database
from vpx.config import Settings
from vpx.db import Database
from vpx.demo.bulk import bulk_load_demo
from vpx.models import Contact, SearchTerm

NAME = "vpx_bench_catalogue"


async def build(url: str, count: int, seed: int) -> dict[str, float]:
    database = Database(Settings(database_url=url), pool=False)
    started = time.perf_counter()
    written = await bulk_load_demo(database, count=count, seed=seed, now=datetime.now(UTC))
    elapsed = time.perf_counter() - started
    async with database.read_sessions() as session:
        contacts = await session.scalar(select(func.count()).select_from(Contact))
        terms = await session.scalar(select(func.count()).select_from(SearchTerm))
        if database.dialect == "postgresql":
            size = await session.scalar(text("SELECT pg_database_size(current_database())"))
        else:
            pages = await session.scalar(text("PRAGMA page_count"))
            page_size = await session.scalar(text("PRAGMA page_size"))
            size = (pages or 0) * (page_size or 0)
        postings = await session.scalar(text("SELECT count(*) FROM search_postings"))
    await database.dispose()
    assert contacts == written == count
    return {
        "seconds": elapsed,
        "rows_per_s": count / elapsed,
        "vocabulary": float(terms or 0),
        "size_gb": float(size or 0) / 1e9,
        "posting_rows": float(postings or 0),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--backends", default="sqlite,postgresql")
    args = parser.parse_args()
    print(f"catalogue build: {args.count:,} contacts, seed {args.seed}")
    for backend in args.backends.split(","):
        name = catalogue_name(args.count)
        url = fresh_database(backend, f"vpx_bench_{name}" if backend == "postgresql" else name)
        figures = asyncio.run(build(url, args.count, args.seed))
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        verdict = "ok" if figures["seconds"] < 120 else "over the 2-minute goal"
        print(
            f"  {backend:<10} {figures['seconds']:7.1f} s  {figures['rows_per_s']:9,.0f} rows/s  "
            f"vocabulary {figures['vocabulary']:,.0f} words  {figures['posting_rows']:,.0f} posting rows  "
            f"database {figures['size_gb']:.2f} GB  peak RSS so far {peak_mb:,.0f} MB  [{verdict}]"
        )


if __name__ == "__main__":
    main()
