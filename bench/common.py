"""Shared by the benchmarks: where the benchmark databases live, and fresh-database helpers."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = ROOT / "var" / "bench"
POSTGRES_ADMIN = os.environ.get("VPX_BENCH_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres")


def catalogue_name(count: int) -> str:
    """The bench catalogue of ``count`` contacts: ``catalogue`` (1,000,000, the default) or
    ``catalogue_10m`` and the like, so that catalogues of several sizes sit side by side (the SQLite
    file under var/bench, and the PostgreSQL database ``vpx_bench_<name>``)."""
    if count == 1_000_000:
        return "catalogue"
    if count % 1_000_000 == 0:
        return f"catalogue_{count // 1_000_000}m"
    return f"catalogue_{count}"


def catalogue_urls(count: int) -> dict[str, str]:
    name = catalogue_name(count)
    return {"sqlite": sqlite_url(name), "postgresql": postgres_url(f"vpx_bench_{name}")}


def sqlite_url(name: str) -> str:
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    return f"sqlite+aiosqlite:///{BENCH_DIR / name}.db"


def postgres_url(name: str) -> str:
    return POSTGRES_ADMIN.rsplit("/", 1)[0] + "/" + name


def fresh_database(backend: str, name: str) -> str:
    """An empty, migrated database of the backend; an existing one of that name is replaced."""
    from vpx.config import Settings
    from vpx.migrations import upgrade

    if backend == "sqlite":
        url = sqlite_url(name)
        path = Path(url.split("///", 1)[1])
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    else:
        url = postgres_url(name)

        async def recreate() -> None:
            engine = create_async_engine(POSTGRES_ADMIN, isolation_level="AUTOCOMMIT")
            async with engine.connect() as conn:
                await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
                await conn.execute(text(f'CREATE DATABASE "{name}"'))
            await engine.dispose()

        asyncio.run(recreate())
    upgrade(Settings(database_url=url))
    return url


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]
