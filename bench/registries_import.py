"""Import throughput and peak memory for a large file in the NPPES layout.

    python bench/registries_import.py make  /tmp/npi_1m.csv --rows 1000000   # replicate and perturb the sample
    python bench/registries_import.py read  /tmp/npi_1m.csv                  # read and normalise only
    python bench/registries_import.py load  /tmp/npi_1m.csv --database sqlite
    python bench/registries_import.py load  /tmp/npi_1m.csv --database postgresql
    python bench/registries_import.py all   --rows 1000000                   # all of it, one process each

Each measurement runs in a process of its own and prints rows/s and the process's peak resident
memory (``resource.getrusage``). Uses the shared NPPES sample and NUCC code set (shared/data).
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import random
import resource
import subprocess
import sys
import time
import uuid
from datetime import UTC, date, datetime
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SAMPLE = SHARED / "nppes" / "npidata_pfile_sample_k0bl.csv"
NUCC = SHARED / "nppes" / "nucc_taxonomy_150.csv"
POSTGRES_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


def peak_mb() -> float:
    """Peak resident memory of this process, or of its reader process if that was larger."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024


def make(path: Path, rows: int, seed: int = 3) -> None:
    """Replicates the sample's active rows, perturbing what makes a record distinct: NPI, names,
    street number, phone; about 2 % are the same business listed again under another NPI."""
    rng = random.Random(seed)
    with SAMPLE.open(newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        sample = [row for row in reader if row[1]]
    at = {name: i for i, name in enumerate(header)}
    last_names = [r[at["Provider Last Name (Legal Name)"]] for r in sample if r[1] == "1"]
    first_names = [r[at["Provider First Name"]] for r in sample if r[1] == "1"]
    org_at = at["Provider Organization Name (Legal Business Name)"]
    words = sorted({w for r in sample if r[1] == "2" for w in r[org_at].split()})
    phone_at = at["Provider Business Practice Location Address Telephone Number"]
    street_at = at["Provider First Line Business Practice Location Address"]
    area_codes = ["205", "303", "415", "512", "615", "704", "817", "919"]
    with path.open("w", newline="") as out:
        writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
        writer.writerow(header)
        previous: list[str] | None = None
        for index in range(rows):
            if previous is not None and rng.random() < 0.02:
                row = list(previous)  # the same business again, another NPI
            else:
                row = list(sample[index % len(sample)])
                if row[1] == "1":
                    row[at["Provider Last Name (Legal Name)"]] = rng.choice(last_names)
                    row[at["Provider First Name"]] = rng.choice(first_names)
                else:
                    row[org_at] = " ".join(rng.sample(words, 3)) + rng.choice([" LLC", " INC", " PC", ""])
                number, _, rest = row[street_at].partition(" ")
                row[street_at] = f"{rng.randint(1, 9999)} {rest}" if number.isdigit() else row[street_at]
                row[phone_at] = f"{rng.choice(area_codes)}{rng.randint(2, 9)}{rng.randint(0, 999999):06d}"
            row[0] = f"{1000000000 + index}"
            writer.writerow(row)
            previous = row


def read_only(path: Path, *, pickled: bool = False, dialect: str = "sqlite") -> dict[str, float]:
    """The reader stage as the import's reader process runs it (vpx.registries.importer.read_batches,
    its garbage-collector setting, batches of 5,000), the batches dropped instead of queued;
    ``pickled``: also pickled, as the queue to the writer does; ``dialect``: the database the reader
    prepares for (for PostgreSQL it also makes the contacts' search vectors)."""
    import pickle

    from vpx.registries.importer import collect_now, quiet_collector, read_batches
    from vpx.registries.nppes import Nppes
    from vpx.registries.nucc import NuccTaxonomy
    from vpx.registries.reader import open_text
    from vpx.registries.records import ImportSummary
    from vpx.registries.sources import ImportContext

    ctx = ImportContext.__new__(ImportContext)
    ctx.summary = ImportSummary(source="nucc", path=str(NUCC))
    opened = open_text(NUCC)
    taxonomy = {
        e["code"]: (e["specialty"], e["vertical"], e["grouping"], e["classification"])
        for e in NuccTaxonomy().read(opened, ctx)
        if isinstance(e, dict)
    }
    opened.close()
    ctx.lookups = {"taxonomy": taxonomy}
    ctx.now = datetime.now(UTC)
    ctx.dialect = dialect
    quiet_collector()
    count = 0
    failed: list[object] = []

    def put(message: tuple[object, ...]) -> bool:
        nonlocal count
        if message[0] == "batch":
            count += message[1].rows  # type: ignore[attr-defined]
            if pickled:
                pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        elif message[0] == "error":
            failed.append(message)
        collect_now()
        return True

    started = time.perf_counter()
    cpu = time.process_time()
    read_batches(Nppes(), path, ctx, batch_size=5000, limit=None, put=put)
    seconds = time.perf_counter() - started
    if failed:
        raise SystemExit(f"reader failed: {failed}")
    return {
        "rows": count,
        "seconds": round(seconds, 1),
        "cpu_seconds": round(time.process_time() - cpu, 1),
        "rows_per_second": round(count / seconds),
        "peak_mb": round(peak_mb()),
    }


async def _load(path: Path, url: str, mode: str) -> dict[str, float | str | None]:
    from vpx.config import Settings
    from vpx.db import Database
    from vpx.migrations import upgrade
    from vpx.registries.importer import run_import
    from vpx.registries.sources import all_sources

    settings = Settings(database_url=url, log_level="WARNING")
    await asyncio.to_thread(upgrade, settings)
    database = Database(settings, pool=False)
    sources = all_sources()
    now = datetime.now(UTC)
    try:
        await run_import(database, sources["nucc"](), NUCC, now=now)
        summary = await run_import(database, sources["nppes"](), path, now=now, file_date=date(2026, 11, 1), mode=mode)
    finally:
        await database.dispose()
    result = summary.as_dict()
    return {
        "rows": result["rows_read"],
        "mode": result["mode"],
        "created": result["created"],
        "merged": result["merged"],
        "skipped": result["skipped_total"],
        "seconds": result["seconds"],
        "rows_per_second": result["rows_per_second"],
        "peak_mb": round(peak_mb()),
    }


def load(path: Path, database: str, mode: str = "auto") -> dict[str, float | str | None]:
    if database == "sqlite":
        target = Path(f"/tmp/vpx_bench_{uuid.uuid4().hex[:8]}.db")
        try:
            return asyncio.run(_load(path, f"sqlite+aiosqlite:///{target}", mode))
        finally:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{target}{suffix}").unlink(missing_ok=True)
    name = f"vpx_bench_{uuid.uuid4().hex[:8]}"
    subprocess.run(["psql", POSTGRES_ADMIN, "-qc", f'CREATE DATABASE "{name}"'], check=True)
    try:
        base = POSTGRES_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://")
        return asyncio.run(_load(path, f"{base}/{name}", mode))
    finally:
        subprocess.run(["psql", POSTGRES_ADMIN, "-qc", f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=["make", "read", "load", "all"])
    parser.add_argument("path", nargs="?", type=Path, default=Path("/tmp/vpx_npi_bench.csv"))
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--mode", choices=["auto", "batches", "bulk"], default="auto", help="the import's load mode")
    args = parser.parse_args()
    if args.step == "make":
        started = time.perf_counter()
        make(args.path, args.rows)
        print(json.dumps({"made": str(args.path), "rows": args.rows, "bytes": args.path.stat().st_size,
                          "seconds": round(time.perf_counter() - started, 1)}))  # fmt: skip
    elif args.step == "read":
        print(json.dumps({"step": "read and normalise", **read_only(args.path)}))
        print(json.dumps({"step": "read, normalise and pickle", **read_only(args.path, pickled=True)}))
        with_vectors = read_only(args.path, pickled=True, dialect="postgresql")
        print(json.dumps({"step": "the same, with PostgreSQL's search vectors", **with_vectors}))
    elif args.step == "load":
        print(json.dumps({"step": f"import into {args.database}", **load(args.path, args.database, args.mode)}))
    else:
        if not args.path.exists():
            make(args.path, args.rows)
        for step in (["read"], ["load", "--database", "sqlite"], ["load", "--database", "postgresql"]):
            subprocess.run([sys.executable, __file__, step[0], str(args.path), *step[1:]], check=True)


if __name__ == "__main__":
    main()
