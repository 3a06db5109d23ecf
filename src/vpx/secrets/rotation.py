"""Re-sealing every stored customer secret with the first key (`vpx secrets rotate`), while servers
run: they open both old and new seals as long as their key list holds both keys."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import text

from vpx.db import Database
from vpx.secrets.box import SEALED_PREFIX, SecretBox


@dataclass(frozen=True)
class SealedColumn:
    """A column holding sealed secrets: its table, the table's key column, the column, and (``only``)
    a condition for a column that holds sealed values among plain ones."""

    table: str
    key: str
    column: str
    only: str = ""


# Every column that holds customer secrets. A capability that stores a new kind of secret adds its
# column here, so that rotation never misses one.
SEALED_COLUMNS: list[SealedColumn] = [
    SealedColumn("enrichment_keys", "id", "key_sealed"),
    SealedColumn("enrichment_batches", "id", "webhook_secret_sealed"),
    SealedColumn("mailboxes", "id", "smtp_password_sealed"),
    SealedColumn("mailboxes", "id", "imap_password_sealed"),
    SealedColumn("enrollments", "id", "unsubscribe_token_sealed"),
    SealedColumn("webhook_endpoints", "id", "secret_sealed"),
    SealedColumn("webhook_endpoints", "id", "previous_secret_sealed"),
    SealedColumn("webhook_deliveries", "id", "secret_sealed"),
    SealedColumn("batch_reveals", "id", "webhook_secret_sealed"),
    SealedColumn("data_sources", "id", "options_sealed"),  # sources' secret options (an app token)
    SealedColumn("drop_state", "id", "api_key_sealed"),  # VPX_DROP_API_KEY (vpx.compliance.drop)
    # Responses kept for idempotent repeats that show a secret are sealed whole (the rest are JSON).
    SealedColumn("idempotency_records", "id", "response_body", only=f"response_body LIKE '{SEALED_PREFIX}%'"),
]
BATCH = 500


async def rotate(database: Database, box: SecretBox) -> dict[str, int]:
    """Re-seals every secret with the box's first key; returns how many per table.column. Each batch
    is its own transaction; running it again is harmless."""
    counts: dict[str, int] = {}
    for sealed in SEALED_COLUMNS:
        done = 0
        last = None
        while True:
            async with database.write_sessions() as session, session.begin():
                where = f"WHERE {sealed.column} IS NOT NULL" + (
                    f" AND {sealed.key} > :last" if last is not None else ""
                )
                if sealed.only:
                    where += f" AND {sealed.only}"
                rows = (
                    await session.execute(
                        text(
                            f"SELECT {sealed.key}, {sealed.column} FROM {sealed.table} {where} "
                            f"ORDER BY {sealed.key} LIMIT {BATCH}"
                        ),
                        {"last": last},
                    )
                ).all()
                for key, value in rows:
                    await session.execute(
                        text(f"UPDATE {sealed.table} SET {sealed.column} = :value WHERE {sealed.key} = :key"),
                        {"value": box.reseal(value), "key": key},
                    )
            done += len(rows)
            if len(rows) < BATCH:
                break
            last = rows[-1][0]
        counts[f"{sealed.table}.{sealed.column}"] = done
    return counts
