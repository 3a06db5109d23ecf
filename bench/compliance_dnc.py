"""Importing the national Do-Not-Call registry's data: a full list of 1,000,000 numbers, the same file
again (idempotent), and a change list, against a catalogue whose phones get their ``phone_dnc``.

    .venv/bin/python -m bench.compliance_dnc [--numbers 1000000] [--changes 20000] [--contacts 100000]
        [--backends sqlite,postgresql]

A fresh database per backend (``compliance_dnc``, ``vpx_bench_compliance_dnc``) is loaded with
--contacts demo contacts; the registry files are written under var/bench: a full list in the
area-code-and-number layout (``202,5550143``) over the ten area codes the catalogue's phones use most
(a tenth of them the catalogue's own phones, so that contacts are flagged), and a change list (a date
and an add or delete mark per number). Each import runs vpx.compliance.dnc.service.import_file, in a
process of its own so that its peak RSS is its own.

Printed per backend and import: the time, numbers a second, the contacts whose phone_dnc changed, and
the peak RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import resource
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select

from bench.common import BENCH_DIR, fresh_database
from vpx.compliance.dnc import service as dnc_service
from vpx.config import Settings
from vpx.db import Database
from vpx.demo.bulk import bulk_load_demo
from vpx.models import Contact

VERSION = date(2026, 11, 28)


async def prepare(url: str, contacts: int, numbers: int, changes: int, seed: int) -> tuple[Path, Path, float]:
    """Loads the catalogue and writes the two registry files; the load's seconds."""
    database = Database(Settings(database_url=url), pool=False)
    started = time.perf_counter()
    await bulk_load_demo(database, count=contacts, seed=seed, now=datetime.now(UTC))
    loaded = time.perf_counter() - started
    async with database.read_sessions() as session:
        phones = [p for p in await session.scalars(select(Contact.phone).where(Contact.phone.is_not(None))) if p]
    await database.dispose()
    rng = random.Random(seed)
    by_area = Counter(p[2:5] for p in phones if p.startswith("+1") and len(p) == 12)
    areas = [code for code, _ in by_area.most_common(10)]
    own = sorted({int(p[2:]) for p in phones if p[2:5] in areas})
    listed = set(rng.sample(own, min(len(own), numbers // 10)))
    while len(listed) < numbers:  # the rest: random numbers of the same area codes
        code = int(rng.choice(areas))
        listed.add(code * 10_000_000 + rng.randrange(2_000_000, 10_000_000))
    ordered = sorted(listed)
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    full = BENCH_DIR / "dnc_full.txt"
    with full.open("w") as out:
        out.write("AreaCode,PhoneNumber\n")
        out.writelines(f"{n // 10_000_000},{n % 10_000_000:07d}\n" for n in ordered)
    change = BENCH_DIR / "dnc_changes.txt"
    gone = rng.sample(ordered, changes // 2)
    added = [int(areas[-1]) * 10_000_000 + 1_500_000 + k for k in range(changes - len(gone))]
    with change.open("w") as out:
        out.writelines(f"{n},2026-11-29,D\n" for n in gone)
        out.writelines(f"{n},2026-11-29,A\n" for n in added)
    return full, change, loaded


async def run(url: str, path: Path, mode: dnc_service.Mode, version: date) -> dict[str, Any]:
    database = Database(Settings(database_url=url), pool=False)
    started = time.perf_counter()
    report = await dnc_service.import_file(
        database,
        path,
        mode=mode,
        version_date=version,
        area_codes=None,
        now=datetime.now(UTC),
    )
    elapsed = time.perf_counter() - started
    await database.dispose()
    return {
        "seconds": elapsed,
        "lines": report.lines,
        "numbers": sum(a["numbers"] for a in report.area_codes),
        "contacts_updated": report.contacts_updated,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _prepare(url: str, contacts: int, numbers: int, changes: int, seed: int) -> tuple[Path, Path, float]:
    return asyncio.run(prepare(url, contacts, numbers, changes, seed))


def _run(url: str, path: Path, mode: dnc_service.Mode, version: date) -> dict[str, Any]:
    return asyncio.run(run(url, path, mode, version))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--numbers", type=int, default=1_000_000)
    parser.add_argument("--changes", type=int, default=20_000)
    parser.add_argument("--contacts", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--backends", default="sqlite,postgresql")
    args = parser.parse_args()
    print(
        f"DNC import: {args.numbers:,} numbers (full), again, then {args.changes:,} changes; {args.contacts:,} contacts"
    )
    spawn = multiprocessing.get_context("spawn")
    for backend in args.backends.split(","):
        url = fresh_database(backend, "vpx_bench_compliance_dnc" if backend == "postgresql" else "compliance_dnc")
        with ProcessPoolExecutor(1, mp_context=spawn) as pool:
            full, change, loaded = pool.submit(
                _prepare, url, args.contacts, args.numbers, args.changes, args.seed
            ).result()
        print(f"  {backend}: catalogue loaded in {loaded:.1f} s")
        imports: list[tuple[str, Path, dnc_service.Mode, date]] = [
            ("full list", full, "full", VERSION),
            ("same file again", full, "full", VERSION),
            ("change list", change, "changes", date(2026, 11, 29)),
        ]
        for label, path, mode, version in imports:
            with ProcessPoolExecutor(1, mp_context=spawn) as pool:
                found = pool.submit(_run, url, path, mode, version).result()
            print(
                f"    {label:<16} {found['seconds']:6.1f} s  {found['lines'] / found['seconds']:9,.0f} lines/s  "
                f"{found['numbers']:,} numbers held  {found['contacts_updated']:,} contacts' phone_dnc changed  "
                f"peak RSS {found['rss_mb']:,.0f} MB"
            )


if __name__ == "__main__":
    main()
