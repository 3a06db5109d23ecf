"""A DROP batch against a large catalogue: how long vpx takes to download, match, act on and answer
100,000 work items against 1,000,000 contacts, and the memory it needs.

    .venv/bin/python -m bench.compliance_drop [--contacts 1000000] [--items 100000] [--matched 0.01]
        [--backends sqlite,postgresql]

A fresh database per backend (``compliance_drop``, ``vpx_bench_compliance_drop``) is loaded with the
demo generator's catalogue (its emails and phones hashed by the database's triggers as they are
written). The batch is a ZIP as DROP ships it: half emails, half phones; ``--matched`` of them the hash
of a contact's email or phone (each then erased: status 3, or 4 when the phone is shared), the rest
hashes no contact has (status 5, kept to screen later imports). The cycle's own code runs it
(vpx.compliance.drop.cycle.pull and report) with a stand-in for DROP's HTTP API that hands over the
ZIP and takes the answer files.

Printed: the catalogue's load (a process of its own), then, in a fresh process, the batch: the
download (reading the ZIP, storing the items), the decisions and the answer, items per second, the
statuses, and the process's peak RSS with the ZIP made and at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import io
import multiprocessing
import random
import resource
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select

from bench.common import fresh_database
from vpx.compliance.drop import cycle
from vpx.compliance.drop.client import Download, UploadAnswer
from vpx.config import Settings
from vpx.db import Database
from vpx.demo.bulk import bulk_load_demo
from vpx.models import Contact, DropItem


class StandIn:
    """DROP's two calls, in process: the ZIP handed over, the answer files taken."""

    def __init__(self, content: bytes, name: str) -> None:
        self.content, self.name = content, name
        self.uploaded: list[tuple[str, int]] = []

    async def download(self) -> Download:
        return Download(content=self.content, file_name=self.name)

    async def upload(self, files: list[tuple[str, bytes]]) -> UploadAnswer:
        self.uploaded = [(name, body.count(b"\n") - 1) for name, body in files]
        return UploadAnswer(accepted=[name for name, _ in files])

    async def close(self) -> None:
        return None


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _random_hash(rng: random.Random) -> str:
    return base64.b64encode(hashlib.sha256(rng.randbytes(16)).digest()).decode()


async def _batch(database: Database, items: int, matched: float, seed: int) -> bytes:
    """The ZIP: ``items`` work items, ``matched`` of them hashes contacts have."""
    rng = random.Random(seed)
    wanted = int(items * matched) // 2
    async with database.read_sessions() as session:
        top = int(await session.scalar(select(func.max(Contact.id))) or 0)
        ids = rng.sample(range(1, top + 1), min(top, wanted * 4))
        emails = [
            h for h in await session.scalars(select(Contact.email_hash).where(Contact.id.in_(ids[: wanted * 2]))) if h
        ][:wanted]
        phones = [
            h for h in await session.scalars(select(Contact.phone_hash).where(Contact.id.in_(ids[wanted * 2 :]))) if h
        ][:wanted]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for list_type, known in (("Email", emails), ("Phone", phones)):
            hashes = known + [_random_hash(rng) for _ in range(items // 2 - len(known))]
            rng.shuffle(hashes)
            lines = ["ID,Hash"] + [f"{list_type[0]}{n:011d},{h}" for n, h in enumerate(hashes)]
            archive.writestr(f"20261115_4821_{list_type}.csv", "\n".join(lines) + "\n")
    return buffer.getvalue()


async def load(url: str, contacts: int, seed: int) -> float:
    database = Database(Settings(database_url=url), pool=False)
    started = time.perf_counter()
    await bulk_load_demo(database, count=contacts, seed=seed, now=datetime.now(UTC))
    await database.dispose()
    return time.perf_counter() - started


async def run(url: str, items: int, matched: float, seed: int) -> dict[str, Any]:
    """The batch, in a process of its own (its peak RSS is the batch's)."""
    database = Database(Settings(database_url=url), pool=False)
    now = datetime.now(UTC)
    content = await _batch(database, items, matched, seed)
    before = _peak_mb()
    drop = StandIn(content, "20261115_4821_DROP.zip")
    started = time.perf_counter()
    pulled = await cycle.pull(database, client=drop, now=now)  # type: ignore[arg-type]
    downloaded = time.perf_counter() - started
    started = time.perf_counter()
    answered = await cycle.report(database, client=drop, now=now)  # type: ignore[arg-type]
    decided = time.perf_counter() - started
    async with database.read_sessions() as session:
        undecided = await session.scalar(select(func.count()).select_from(DropItem).where(DropItem.status.is_(None)))
    await database.dispose()
    assert pulled.items == items and undecided == 0
    return {
        "zip_kb": len(content) / 1024,
        "download_s": downloaded,
        "decide_s": decided,
        "counts": answered["counts"],
        "files": drop.uploaded,
        "rss_before_mb": before,
        "rss_after_mb": _peak_mb(),
    }


def _load(url: str, contacts: int, seed: int) -> float:
    return asyncio.run(load(url, contacts, seed))


def _run(url: str, items: int, matched: float, seed: int) -> dict[str, Any]:
    return asyncio.run(run(url, items, matched, seed))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--contacts", type=int, default=1_000_000)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--matched", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--backends", default="sqlite,postgresql")
    args = parser.parse_args()
    print(f"DROP batch: {args.items:,} work items ({args.matched:.0%} matching) against {args.contacts:,} contacts")
    for backend in args.backends.split(","):
        url = fresh_database(backend, "vpx_bench_compliance_drop" if backend == "postgresql" else "compliance_drop")
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            loaded = pool.submit(_load, url, args.contacts, args.seed).result()
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            found = pool.submit(_run, url, args.items, args.matched, args.seed).result()
        total = found["download_s"] + found["decide_s"]
        print(
            f"  {backend:<10} catalogue loaded in {loaded:.1f} s; ZIP {found['zip_kb']:,.0f} KB; "
            f"download {found['download_s']:.1f} s, decide and answer {found['decide_s']:.1f} s "
            f"({args.items / total:,.0f} items/s); {found['counts']}; answer files {found['files']}; "
            f"the batch's process: peak RSS {found['rss_before_mb']:,.0f} MB with the ZIP made, "
            f"{found['rss_after_mb']:,.0f} MB at the end"
        )


if __name__ == "__main__":
    main()
