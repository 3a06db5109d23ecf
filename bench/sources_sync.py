"""An NPPES source synced end to end from a local fake of CMS's download page (download, unzip,
import) against `vpx import` of the same file; and what an unchanged source costs.

    .venv/bin/python -m bench.sources_sync [--size-mb 1024] [--database sqlite|postgresql]

A monthly file of about ``--size-mb`` in the NPPES layout is generated from the shared sample
(shared/data: the rows replicated and perturbed, as bench/registries_import.py does) into
var/bench/sources/, zipped as CMS ships it (the data file, its header file, the companion files)
and served with a download page by ``python -m http.server`` on loopback (Last-Modified and 304s).

Each measurement runs in a process of its own on a fresh database holding the NUCC code set:
``import`` times `vpx import nppes` on the unzipped file; ``sync`` adds an nppes source pointing at
the page and times `vpx sources run` (the page, the download, the unzip, the import) and then a second
run of the unchanged source. Printed: both times, their ratio (goal: at most 1.2), each process's peak
resident memory (its reader process included), and the unchanged run's requests (goal: one) and time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import time
import zipfile
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from bench.common import BENCH_DIR, fresh_database
from bench.registries_import import NUCC, SAMPLE, make

FOLDER = BENCH_DIR / "sources"
MONTHLY = "NPPES_Data_Dissemination_November_2026_V2.zip"
DATA = "npidata_pfile_20050523-20261108.csv"


def peak_mb() -> float:
    """Peak resident memory of this process or of its largest child (the import's reader process)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, children) / 1024)


def prepare(size_mb: int) -> Path:
    """var/bench/sources/<size>mb/: the data file, its zip as CMS packs it, and the download page
    (kept between runs: made again only for another size)."""
    folder = FOLDER / f"{size_mb}mb"
    site = folder / "nppes"
    data = folder / DATA
    archive = site / MONTHLY
    if archive.is_file() and data.is_file():
        return folder
    if not SAMPLE.is_file() or not NUCC.is_file():
        raise SystemExit(f"the shared NPPES sample and NUCC code set are needed: {SAMPLE}, {NUCC}")
    site.mkdir(parents=True, exist_ok=True)
    per_row = SAMPLE.stat().st_size / 499
    started = time.perf_counter()
    make(data, max(1000, round(size_mb * 1024 * 1024 / per_row)))
    header = data.open("rb").readline()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as packed:
        packed.write(data, DATA)
        packed.writestr(DATA.replace(".csv", "_fileheader.csv"), header)
        packed.writestr(DATA.replace("npidata", "othername"), b'"NPI","Provider Other Organization Name"\n')
        packed.writestr(DATA.replace("npidata", "pl"), b'"NPI","Provider Secondary Practice Location Address"\n')
        packed.writestr(DATA.replace("npidata", "endpoint"), b'"NPI","Endpoint Type"\n')
        packed.writestr("NPPES_Data_Dissemination_Readme.pdf", b"%PDF-1.4\n")
    (site / "NPI_Files.html").write_text(
        f"<html><body><a href='./{MONTHLY}'>NPPES Data Dissemination V.2</a>"
        "<a href='./NPPES_Data_Dissemination_Readme.pdf'>Readme</a></body></html>"
    )
    print(json.dumps({"made": str(data), "bytes": data.stat().st_size, "zipped_bytes": archive.stat().st_size,
                      "seconds": round(time.perf_counter() - started, 1)}))  # fmt: skip
    return folder


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _with_taxonomy(url: str) -> None:
    from vpx.config import Settings
    from vpx.db import Database
    from vpx.registries.importer import run_import
    from vpx.registries.sources import all_sources

    database = Database(Settings(database_url=url, log_level="WARNING"), pool=False)
    try:
        await run_import(database, all_sources()["nucc"](), NUCC, now=datetime.now(UTC))
    finally:
        await database.dispose()


async def _import(url: str, data: Path) -> dict[str, Any]:
    from vpx.config import Settings
    from vpx.db import Database
    from vpx.registries.importer import run_import
    from vpx.registries.sources import all_sources

    database = Database(Settings(database_url=url, log_level="WARNING"), pool=False)
    try:
        started = time.perf_counter()
        summary = await run_import(
            database, all_sources()["nppes"](), data, now=datetime.now(UTC), file_date=date(2026, 11, 8)
        )
        seconds = time.perf_counter() - started
    finally:
        await database.dispose()
    return {"seconds": round(seconds, 2), "rows": summary.rows_read, "created": summary.created, "mode": summary.mode}


async def _sync(url: str, page: str, data_dir: Path) -> dict[str, Any]:
    from vpx.config import Settings
    from vpx.db import Database
    from vpx.secrets import generate_key, load_box
    from vpx.sources import runner
    from vpx.sources import service as source_service

    settings = Settings(database_url=url, log_level="WARNING", data_dir=data_dir, secret_keys=generate_key())
    database = Database(settings, pool=False)
    box = load_box(settings)
    try:
        new = source_service.check_new(
            name="nppes", kind="nppes", url=page, every="1d", mapping=None, mapping_name=None, options={}
        )
        async with database.write_sessions() as session, session.begin():
            await source_service.add_source(session, new, box=box, now=datetime.now(UTC))
        started = time.perf_counter()
        report = await runner.run_source(database, settings, name="nppes", owner="bench", box=box)
        seconds = time.perf_counter() - started
        if report.status != "ok":
            raise SystemExit(f"the sync failed: {report.error}")
        peak = peak_mb()
        started = time.perf_counter()
        again = await runner.run_source(database, settings, name="nppes", owner="bench", box=box)
        unchanged_seconds = time.perf_counter() - started
    finally:
        await database.dispose()
    return {
        "seconds": round(seconds, 2),
        "rows": report.rows_read,
        "created": report.created,
        "bytes_downloaded": report.bytes_downloaded,
        "peak_mb": peak,
        "unchanged": {
            "status": again.status,
            "requests": again.requests,
            "seconds": round(unchanged_seconds, 3),
        },
    }


def measure(step: str, database: str, folder: Path, page: str) -> None:
    """One measurement, in this process (run by ``main`` as a process of its own)."""
    url = fresh_database(database, f"vpx_bench_sources_{step}")
    asyncio.run(_with_taxonomy(url))
    if step == "import":
        found = asyncio.run(_import(url, folder / DATA))
        found["peak_mb"] = peak_mb()
    else:
        found = asyncio.run(_sync(url, page, folder / "sync-data"))
    print(json.dumps(found))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=1024, help="the monthly file's size, unzipped")
    parser.add_argument("--database", choices=["sqlite", "postgresql"], default="sqlite")
    parser.add_argument("--measure", choices=["import", "sync"], help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--page", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure, args.database, args.folder, args.page)
        return
    folder = prepare(args.size_mb)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    page = f"http://127.0.0.1:{port}/nppes/NPI_Files.html"
    try:
        time.sleep(0.5)
        results: dict[str, dict[str, Any]] = {}
        for step in ("import", "sync"):
            done = subprocess.run(
                [sys.executable, "-m", "bench.sources_sync", "--measure", step, "--database", args.database,
                 "--folder", str(folder), "--page", page],
                capture_output=True, text=True, check=False, env={**os.environ, "VPX_LOG_LEVEL": "WARNING"},
            )  # fmt: skip
            if done.returncode != 0:
                raise SystemExit(f"{step} failed:\n{done.stderr}{done.stdout}")
            results[step] = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        server.terminate()
        server.wait()
    imported, synced = results["import"], results["sync"]
    print(json.dumps({
        "database": args.database,
        "file_mb": round((folder / DATA).stat().st_size / 1024 / 1024),
        "zipped_mb": round((folder / "nppes" / MONTHLY).stat().st_size / 1024 / 1024),
        "rows": imported["rows"],
        "vpx_import_seconds": imported["seconds"],
        "sync_seconds": synced["seconds"],
        "ratio": round(synced["seconds"] / imported["seconds"], 2),
        "goal_ratio": 1.2,
        "import_peak_mb": imported["peak_mb"],
        "sync_peak_mb": synced["peak_mb"],
        "unchanged_run": synced["unchanged"],
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
