"""The DROP cycle: ``pull`` downloads a batch and keeps its work items (and lifts what a ``_Removed``
file withdraws), ``report`` decides the items left (vpx.compliance.drop.decide) and answers DROP,
``exempt`` records the operator's exemption of an item before it is decided. The worker runs the cycle
on its schedule (vpx.compliance.drop.schedule); the operator can run each step (`vpx drop …`).

A batch must be answered within 45 days of its download, and DROP accessed at least every 45 days;
every step writes its audit entry (vpx.compliance.audit).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Table, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.compliance import audit, erasure
from vpx.compliance.drop import decide
from vpx.compliance.drop.archive import DropArchiveError, answer_file, answer_name, read_archive
from vpx.compliance.drop.client import DropClient, DropError, DropWait
from vpx.config import Settings
from vpx.db import Database, insert_unless_exists
from vpx.ids import new_id
from vpx.models import DropBatch, DropItem, DropState
from vpx.registries import bulk
from vpx.secrets import SecretBox
from vpx.suppression.reasons import DROP_DELETION, DROP_OPT_OUT

DEADLINE = timedelta(days=45)
_ITEMS: Table = DropItem.__table__  # type: ignore[assignment]
ITEM_COLUMNS = ("batch_id", "list_type", "file_name", "item_id", "hash")


class DropCycleError(Exception):
    """A step that cannot run now; ``code`` names why (not_configured, open_batch, nothing_to_report,
    not_found, already_decided, drop_refused, bad_download)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class PullResult:
    status: str  # downloaded, no_data or waiting
    batch_id: str | None = None
    items: int = 0
    removed: int = 0
    lifted: int = 0
    retry_after: int | None = None
    message: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "batch_id": self.batch_id,
            "items": self.items,
            "removed": self.removed,
            "lifted": self.lifted,
            "retry_after": self.retry_after,
            "message": self.message,
        }


async def state_of(session: AsyncSession) -> DropState:
    """The cycle's one state row (made on first use)."""
    state = await session.get(DropState, 1)
    if state is None:
        await session.execute(insert_unless_exists(session, DropState).values(id=1))
        state = await session.get(DropState, 1)
    assert state is not None
    return state


async def _set_state(database: Database, **values: Any) -> None:
    async with database.writer_turn(), database.write_sessions() as session, session.begin():
        state = await state_of(session)
        for name, value in values.items():
            setattr(state, name, value)


async def api_key(database: Database, settings: Settings, box: SecretBox) -> str:
    """VPX_DROP_API_KEY, kept sealed in the database when it is given (and rotated with the customer
    secrets, `vpx secrets rotate`); without it, the key kept before."""
    given = settings.drop_api_key.get_secret_value().strip() if settings.drop_api_key is not None else ""
    async with database.read_sessions() as session:
        state = await session.get(DropState, 1)
        stored = box.open(state.api_key_sealed) if state is not None and state.api_key_sealed else None
    if given and given != stored:
        await _set_state(database, api_key_sealed=box.seal(given))
        return given
    if stored:
        return stored
    raise DropCycleError("not_configured", "VPX_DROP_API_KEY is not set: DROP's portal issues the key")


@asynccontextmanager
async def drop_client(database: Database, settings: Settings, box: SecretBox) -> AsyncIterator[DropClient]:
    if not settings.drop_url:
        raise DropCycleError("not_configured", "VPX_DROP_URL is not set (https://api.drop.privacy.ca.gov)")
    client = DropClient(
        settings.drop_url, await api_key(database, settings, box), timeout=settings.drop_timeout_seconds
    )
    try:
        yield client
    finally:
        await client.close()


async def open_batch(session: AsyncSession) -> DropBatch | None:
    """The oldest batch not answered yet."""
    return await session.scalar(
        select(DropBatch).where(DropBatch.status == "open").order_by(DropBatch.downloaded_at).limit(1)
    )


async def pull(database: Database, *, client: DropClient, now: datetime) -> PullResult:
    """Downloads the next batch. Refused while a batch is open (DROP would answer 409 too)."""
    async with database.read_sessions() as session:
        waiting = await open_batch(session)
    if waiting is not None:
        raise DropCycleError(
            "open_batch",
            f"the batch downloaded {waiting.downloaded_at:%Y-%m-%d} is not answered yet: `vpx drop report` answers it",
        )
    await _set_state(database, last_attempt_at=now)
    try:
        download = await client.download()
    except DropWait as exc:
        await _set_state(database, retry_at=now + timedelta(seconds=exc.seconds), last_error=str(exc))
        return PullResult(status="waiting", retry_after=exc.seconds, message=str(exc))
    except DropError as exc:
        await _set_state(database, last_error=str(exc))
        raise DropCycleError("drop_refused", str(exc)) from None
    if download.content is None:
        async with database.writer_turn(), database.write_sessions() as session, session.begin():
            state = await state_of(session)
            state.last_pull_at, state.retry_at, state.last_error = now, None, None
            await audit.record(session, kind="drop.downloaded", subject="drop", now=now, items=0, batch=None)
        return PullResult(status="no_data", message=download.message)
    try:
        archive = read_archive(download.content)
    except DropArchiveError as exc:
        await _set_state(database, last_error=f"the download could not be read: {exc}")
        raise DropCycleError("bad_download", f"the download could not be read: {exc}") from None
    batch_id = new_id("drb")
    items = archive.items()
    async with database.writer_turn(), database.write_sessions() as session, session.begin():
        answered = items == 0  # nothing to answer: header-only lists, removals only
        session.add(
            DropBatch(
                id=batch_id,
                file_name=download.file_name or f"{now:%Y%m%d}_DROP.zip",
                downloaded_at=now,
                deadline=now + DEADLINE,
                status="reported" if answered else "open",
                items=items,
                removed=len(archive.removed),
                processed_at=now if answered else None,
                reported_at=now if answered else None,
                upload_attempts=0,
            )
        )
        await session.flush()
        for listed in archive.lists:
            rows = [(batch_id, listed.list_type, listed.name, item_id, value) for item_id, value in listed.rows]
            for start in range(0, len(rows), 50_000):
                await bulk.insert_rows(session, _ITEMS, ITEM_COLUMNS, rows[start : start + 50_000])
        lifted = await _lift_removed(session, archive.removed, now=now)
        state = await state_of(session)
        state.last_pull_at, state.retry_at, state.last_error = now, None, None
        await audit.record(
            session,
            kind="drop.downloaded",
            subject=f"drop_batch:{batch_id}",
            now=now,
            file=download.file_name,
            lists={listed.list_type: len(listed.rows) for listed in archive.lists},
            removed=len(archive.removed),
            lifted=lifted,
        )
    return PullResult(status="downloaded", batch_id=batch_id, items=items, removed=len(archive.removed), lifted=lifted)


async def _lift_removed(session: AsyncSession, removed: list[tuple[str, str, str]], *, now: datetime) -> int:
    """A withdrawn request's item lifted: the entries DROP's item put on the list go (never one made
    some other way), and what they alone kept from sale is for sale again."""
    if not removed:
        return 0
    ids = sorted({item_id for item_id, _, _ in removed})
    items = list(
        await session.scalars(
            select(DropItem).where(DropItem.item_id.in_(ids), DropItem.lifted_at.is_(None)).order_by(DropItem.id)
        )
    )
    lifted = 0
    for item in items:
        entries = [int(part) for part in (item.entry_ids or "").split(",") if part]
        if entries:
            lifted += await erasure.lift_entries(session, entries, reasons=frozenset({DROP_DELETION, DROP_OPT_OUT}))
        item.lifted_at = now
    await audit.record(
        session,
        kind="drop.lifted",
        subject="drop",
        now=now,
        items=[item.item_id for item in items],
        unknown=len(ids) - len({item.item_id for item in items}),
        entries=lifted,
    )
    return len(items)


async def exempt(database: Database, *, item_id: str, reason: str, actor: str, now: datetime) -> dict[str, Any]:
    """The operator's exemption of an undecided item of the open batch: answered 2, nothing deleted."""
    async with database.writer_turn(), database.write_sessions() as session, session.begin():
        item = await session.scalar(
            select(DropItem)
            .join(DropBatch, DropBatch.id == DropItem.batch_id)
            .where(DropItem.item_id == item_id, DropBatch.status == "open")
        )
        if item is None:
            raise DropCycleError("not_found", f"no work item {item_id} waits in an open batch")
        if item.status is not None:
            raise DropCycleError("already_decided", f"work item {item_id} was decided already (status {item.status})")
        item.exempt_reason = reason
        await audit.record(
            session, kind="drop.exempted", subject=f"drop_item:{item_id}", now=now, actor=actor, reason=reason
        )
        return {"item_id": item_id, "batch_id": item.batch_id, "exempt_reason": reason}


async def report(database: Database, *, client: DropClient, now: datetime) -> dict[str, Any]:
    """Decides the open batch's items left and uploads one answer file per list."""
    async with database.read_sessions() as session:
        batch = await open_batch(session)
    if batch is None:
        raise DropCycleError("nothing_to_report", "no batch waits for an answer: `vpx drop pull` downloads one")
    counts = await decide.decide_all(database, batch.id, now=now)
    async with database.read_sessions() as session:
        rows = await session.execute(
            select(DropItem.file_name, DropItem.item_id, DropItem.status)
            .where(DropItem.batch_id == batch.id)
            .order_by(DropItem.id)
        )
        by_file: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for file_name, item_id, status in rows:
            assert status is not None  # every item was decided above
            by_file[file_name].append((item_id, status))
    files = [(answer_name(name, batch.upload_attempts), answer_file(rows)) for name, rows in sorted(by_file.items())]
    try:
        answer = await client.upload(files)
    except DropWait as exc:
        await _set_state(database, retry_at=now + timedelta(seconds=exc.seconds), last_error=str(exc))
        return {"status": "waiting", "batch_id": batch.id, "retry_after": exc.seconds, "message": str(exc)}
    except DropError as exc:
        if exc.status != 409:
            await _failed_upload(database, batch.id, str(exc), now=now)
            raise DropCycleError("drop_refused", str(exc)) from None
        # No download waits for answers: DROP took this batch's answers already (an answer lost on
        # the way back); the batch is done.
        answer = None
    rejected = answer.rejected if answer is not None else []
    if rejected:
        reasons = "; ".join(f"{name}: {why}" for name, why in rejected)
        await _failed_upload(database, batch.id, f"DROP refused some files ({reasons})", now=now)
        raise DropCycleError("drop_refused", f"DROP refused some files ({reasons})")
    async with database.writer_turn(), database.write_sessions() as session, session.begin():
        stored = await session.get(DropBatch, batch.id)
        assert stored is not None
        stored.status, stored.reported_at, stored.last_error = "reported", now, None
        stored.upload_attempts += 1
        await audit.record(
            session,
            kind="drop.reported",
            subject=f"drop_batch:{batch.id}",
            now=now,
            files=[name for name, _ in files],
            counts=counts,
            accepted_before=answer is None,
        )
    return {"status": "reported", "batch_id": batch.id, "files": [name for name, _ in files], "counts": counts}


async def _failed_upload(database: Database, batch_id: str, message: str, *, now: datetime) -> None:
    """An upload DROP refused: the next one goes under new names (DROP refuses a name twice)."""
    async with database.writer_turn(), database.write_sessions() as session, session.begin():
        stored = await session.get(DropBatch, batch_id)
        assert stored is not None
        stored.upload_attempts += 1
        stored.last_error = message[:500]
        await audit.record(session, kind="drop.upload_refused", subject=f"drop_batch:{batch_id}", now=now)


async def decided_count(session: AsyncSession, batch_id: str) -> tuple[int, int]:
    """(decided, exempted) items of a batch."""
    decided = await session.scalar(
        select(func.count()).select_from(DropItem).where(DropItem.batch_id == batch_id, DropItem.status.is_not(None))
    )
    exempted = await session.scalar(
        select(func.count())
        .select_from(DropItem)
        .where(DropItem.batch_id == batch_id, DropItem.exempt_reason.is_not(None))
    )
    return int(decided or 0), int(exempted or 0)
