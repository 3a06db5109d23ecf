"""Bulk writes for imports, one small interface over the two databases: COPY on PostgreSQL (asyncpg's
``copy_records_to_table`` on the session's own connection, so inside its transaction), one
``executemany`` on SQLite; and contact ids allocated up front so no row needs RETURNING.

Measured on the NPPES benchmark (docs/benchmarks.md): the ORM's bulk INSERT … RETURNING ran at
under 1,000 rows/s here; these paths are what make the import's goals reachable.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from sqlalchemy import Table, text
from sqlalchemy.ext.asyncio import AsyncSession

T = TypeVar("T")
SQLITE_CHUNK = 2048  # parameters a lookup statement, well under SQLite's limit


def sqlite_chunks(values: Sequence[T], size: int = SQLITE_CHUNK) -> Iterator[list[T]]:
    """``values`` in chunks for SQLite lookups (``IN (?, …)``, ``VALUES (…), …``), each padded to a
    power of two by repeating its last value. The driver keeps every distinct statement prepared
    (128 of them), and a statement with thousands of parameters is a large program: with one
    statement text per batch size, a bulk load's connection grew by 3 MB a second until its cache
    was full. Padded, a lookup has a dozen texts at most; the repeats change no result."""
    for start in range(0, len(values), size):
        chunk = list(values[start : start + size])
        padded = 8
        while padded < len(chunk):
            padded *= 2
        yield chunk + [chunk[-1]] * (padded - len(chunk))


async def allocate_ids(session: AsyncSession, table: Table, count: int, *, table_locked: bool = False) -> list[int]:
    """``count`` fresh primary keys for ``table`` (inside the caller's write transaction).
    ``table_locked``: the transaction holds the table exclusively (a bulk load), so no other
    insert can draw from its sequence: the range is taken in one step instead of ``count``."""
    if count == 0:
        return []
    connection = await session.connection()
    if connection.dialect.name == "postgresql":
        if table_locked:
            last = (
                await connection.execute(
                    text(
                        "SELECT setval(CAST(s AS regclass), nextval(CAST(s AS regclass)) + :n - 1) "
                        "FROM pg_get_serial_sequence(:table, 'id') AS s"
                    ),
                    {"table": table.name, "n": count},
                )
            ).scalar_one()
            return list(range(int(last) - count + 1, int(last) + 1))
        result = await connection.execute(
            text(f"SELECT nextval(pg_get_serial_sequence('{table.name}', 'id')) FROM generate_series(1, :n)"),
            {"n": count},
        )
        return [int(row[0]) for row in result]
    # SQLite: the write transaction (BEGIN IMMEDIATE) holds the database, so max(id) cannot move.
    top = (await connection.execute(text(f"SELECT coalesce(max(id), 0) FROM {table.name}"))).scalar_one()
    return list(range(int(top) + 1, int(top) + 1 + count))


async def insert_rows(session: AsyncSession, table: Table, columns: Sequence[str], rows: list[tuple[Any, ...]]) -> None:
    """Inserts plain rows (values in ``columns`` order, Python types as the models declare them)."""
    if not rows:
        return
    connection = await session.connection()
    dialect = connection.dialect
    if dialect.name == "postgresql":
        raw = await connection.get_raw_connection()
        driver: Any = raw.driver_connection
        if not driver.is_in_transaction():
            await connection.execute(text("SELECT 1"))  # the adapter begins its transaction lazily
        await driver.copy_records_to_table(table.name, records=rows, columns=list(columns))
        return
    processors = [table.c[name].type.bind_processor(dialect) for name in columns]
    if any(processors):
        rows = [
            tuple(
                value if process is None or value is None else process(value)
                for process, value in zip(processors, row, strict=True)
            )
            for row in rows
        ]
    placeholders = ", ".join("?" for _ in columns)
    await connection.exec_driver_sql(f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({placeholders})", rows)
