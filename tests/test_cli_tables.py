"""The CLI's human output reads as tables: `vpx accounts list` one row per account under one header
(blank where there is nothing, never "None"), `vpx status` its workers one row each (no JSON in a
cell). Their --json output is the public interface and stays as it was."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import TEST_SECRET_KEY
from tests.factories import Factory
from tests.faults.support import VPX
from tests.test_cli import vpx
from vpx.worker import status as worker_status

pytestmark = pytest.mark.asyncio


def vpx_text(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "VPX_DATABASE_URL": database_url,
        "VPX_LOG_LEVEL": "WARNING",
        "VPX_SECRET_KEYS": TEST_SECRET_KEY,
        "COLUMNS": "200",  # wide enough for every column on one line
    }
    return subprocess.run([VPX, *args], capture_output=True, text=True, env=env, timeout=120)


async def test_accounts_list_is_one_row_per_account(
    app: FastAPI, client: httpx.AsyncClient, factory: Factory, database_url: str
) -> None:
    first, second = await factory.account(), await factory.account()
    done = vpx_text(database_url, "accounts", "list")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    header = [line for line in lines if "┃" in line and " id " in line and " name " in line]
    assert len(header) == 1, done.stdout  # one table, one header
    for column in ("email", "plan", "status", "balance", "keys", "created", "last request"):
        assert column in header[0], header
    # Oldest first, then by id (the factory's accounts share one creation time).
    older, newer = sorted([first, second], key=lambda account: account.id)
    rows = [line for line in lines if first.id in line or second.id in line]
    assert len(rows) == 2 and older.id in rows[0] and newer.id in rows[1], done.stdout
    assert "active" in rows[0] and "25" in rows[0]
    assert "None" not in done.stdout  # never used, never suspended: empty cells
    assert "2 accounts" in done.stdout
    # --json: as before, every field of each account.
    listed = vpx(database_url, "accounts", "list")["accounts"]
    assert [a["id"] for a in listed] == [older.id, newer.id]
    assert set(listed[0]) == {"id", "name", "email", "plan", "status", "balance", "keys", "created_at",
                              "last_request_at", "suspended_at", "suspension_reason", "deleted_at"}  # fmt: skip
    assert listed[0]["last_request_at"] is None


async def test_status_lists_workers_one_row_each(app: FastAPI, database_url: str) -> None:
    now = datetime.now(UTC)  # the command reads the real clock
    database = app.state.database
    await worker_status.beat(database, worker_id="w-alive", in_server=False, started_at=now, now=now)
    await worker_status.beat(
        database, worker_id="w-gone", in_server=True, started_at=now - timedelta(hours=3), now=now - timedelta(hours=2)
    )
    done = vpx_text(database_url, "status")
    assert done.returncode == 0, done.stderr
    assert '"worker_id"' not in done.stdout and "{" not in done.stdout, done.stdout  # no JSON in a cell
    lines = done.stdout.splitlines()
    assert len([line for line in lines if "┃" in line and " worker " in line and " alive " in line]) == 1
    alive = [line for line in lines if "w-alive" in line]
    gone = [line for line in lines if "w-gone" in line]
    assert len(alive) == len(gone) == 1 and " yes " in alive[0] and " no " in gone[0], done.stdout
    assert "None" not in done.stdout
    assert any("ready" in line and "yes" in line for line in lines), done.stdout
    # --json: as before.
    found = vpx(database_url, "status")
    assert found["ready"] is True and found["live_workers"] == 1
    assert [w["worker_id"] for w in found["workers"]] == ["w-alive", "w-gone"]
    assert found["waiting"] == {"webhook_deliveries": 0, "batch_reveals": 0} and found["oldest_waiting_seconds"] is None
