"""Signal ingest rate: classification (D20, D21), contact linking and the ingest hooks
(signal.created webhooks, stream notification, auto-buy), through the real pipeline, on both
databases. Goal: ≥ 5,000 signals/s on PostgreSQL.

Events: half name their contact (`contact_id`), half name a business that the registries' resolution
must match against the catalogue (half of those are in it, half are new and get a contact made).

On PostgreSQL the catalogue is analysed once loaded, as the registry importers and the demo loader do:
without statistics PostgreSQL plans the resolution's block lookup on the (state, city) index (330 ms a
batch instead of 11 ms), a state no deployment's catalogue is in.

    python -m bench.signals_ingest [--backends postgresql,sqlite] [--contacts 100000] [--signals 20000]
                                   [--profile DIR]   # a pyinstrument profile of each ingest, as text
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import text

from bench.webhooks_support import scratch_database
from vpx.app import create_app
from vpx.clock import Clock
from vpx.config import Settings
from vpx.contacts.catalogue import add_contacts, contact_row
from vpx.contacts.normalise import phone_e164
from vpx.demo.generator import demo_contacts
from vpx.signals.events import BusinessRef, SignalEvent
from vpx.signals.pipeline import BATCH_SIZE, ingest_events


def _events(catalogue: list[dict[str, object]], ids: list[int], count: int) -> list[SignalEvent]:
    rng = random.Random(9)
    observed = datetime(2026, 11, 20, tzinfo=UTC)
    evidence = [
        {"interest": "crm"},
        {"timeline": "Q1"},
        {"budget": "$5k", "timeline": "Q1", "vendor_evaluation": ["A"]},
    ]
    events = []
    for n in range(count):
        common: dict[str, Any] = {
            "category": "switching_intent",
            "observed_at": observed,
            "evidence": rng.choice(evidence),
            "source_record_id": f"b{n}",
        }
        if n % 2 == 0:
            i = rng.randrange(len(ids))
            events.append(SignalEvent(industry=str(catalogue[i]["industry"]), contact_id=f"ct_{ids[i]}", **common))
        elif n % 4 == 1:
            row = catalogue[rng.randrange(len(catalogue))]
            business = BusinessRef(name=str(row["business_name"]), city=str(row["city"]), state=str(row["state"]),
                                   phone=str(row["phone"]) if row.get("phone") else None)  # fmt: skip
            events.append(SignalEvent(industry=str(row["industry"]), business=business, **common))
        else:
            business = BusinessRef(name=f"Newco {n} Holdings", city="Denver", state="CO", phone=f"+1720{n:07d}")
            events.append(SignalEvent(industry="saas", business=business, **common))
    return events


def _write(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)


async def run(backend: str, contacts: int, signals: int, batch_size: int, profile: Path | None = None) -> float:
    async with scratch_database(backend) as url:
        settings = Settings(database_url=url, log_level="WARNING", worker_in_process=False)
        app = create_app(settings)
        database = app.state.database
        now = datetime.now(UTC)
        catalogue = [dict(f) for f in demo_contacts(contacts, seed=21)]
        ids: list[int] = []
        for start in range(0, contacts, 10_000):
            async with database.write_sessions() as session, session.begin():
                rows = [contact_row(f, origin="demo", now=now) for f in catalogue[start : start + 10_000]]
                ids += await add_contacts(session, rows, search=app.state.search, now=now)
        if backend == "postgresql":
            async with database.write_engine.connect() as conn:
                await conn.execution_options(isolation_level="AUTOCOMMIT")
                await conn.execute(text("ANALYZE contacts"))
        events = _events(catalogue, ids, signals)
        # Each database's run starts with the same cold cache of validated phones.
        phone_e164.cache_clear()
        profiler = None
        if profile is not None:
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.0005, async_mode="enabled")
            profiler.start()
        started = time.perf_counter()
        report = await ingest_events(database, events, settings=settings, clock=Clock(), batch_size=batch_size)
        elapsed = time.perf_counter() - started
        if profiler is not None and profile is not None:
            profiler.stop()
            await asyncio.to_thread(_write, profile / f"signals_ingest_{backend}.txt", profiler.output_text())
        assert report.ingested == signals, (report.ingested, report.skipped[:3])
        await database.dispose()
        return signals / elapsed


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backends", default="postgresql,sqlite")
    parser.add_argument("--contacts", type=int, default=100_000)
    parser.add_argument("--signals", type=int, default=20_000)
    parser.add_argument("--batch-size", type=int, default=BATCH_SIZE)
    parser.add_argument("--profile", type=Path, default=None, help="write a pyinstrument profile here")
    args = parser.parse_args()
    print(f"{args.signals:,} signals against {args.contacts:,} contacts, batches of {args.batch_size:,}")
    for backend in args.backends.split(","):
        rate = await run(backend, args.contacts, args.signals, args.batch_size, args.profile)
        print(f"{backend:<11} {rate:>10,.0f} signals/s", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
