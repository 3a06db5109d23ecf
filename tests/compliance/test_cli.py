"""The compliance commands as an operator runs them: the real `vpx` in a subprocess, --json, against
the fake DROP: drop pull/status/report, dnc import, privacy status, vpx status's compliance
part, and privacy audit --verify catching an entry changed after the fact (exit 1). The DROP API key
shows in no output."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import text

from tests.compliance.fake_drop import API_KEY, BROKER, DATE, FakeDrop
from tests.conftest import TEST_SECRET_KEY
from tests.factories import Factory, details
from tests.test_cli import VPX
from vpx.compliance.hashing import email_hash

pytestmark = pytest.mark.asyncio


def run(database_url: str, drop: FakeDrop, *args: str) -> tuple[int, dict[str, Any], str]:
    env = {
        **os.environ,
        "VPX_DATABASE_URL": database_url,
        "VPX_LOG_LEVEL": "WARNING",
        "VPX_SECRET_KEYS": TEST_SECRET_KEY,
        "VPX_DROP_URL": drop.base_url,
        "VPX_DROP_API_KEY": API_KEY,
        "VPX_DROP_BROKER_ID": BROKER,
    }
    done = subprocess.run([VPX, *args, "--json"], capture_output=True, text=True, env=env, timeout=120)
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout + done.stderr
    assert API_KEY not in done.stdout + done.stderr
    return done.returncode, json.loads(lines[0]), done.stderr


async def test_the_commands_an_operator_runs(
    app: FastAPI, factory: Factory, database_url: str, drop: FakeDrop, tmp_path: Path
) -> None:
    person = await factory.contact(business_name="Pat Doe Dental", **details(1))
    drop.offer({"Email": [("CliItem00001", email_hash(details(1)["email"]))], "Phone": []})

    code, pulled, _ = run(database_url, drop, "drop", "pull")
    assert code == 0 and pulled["status"] == "downloaded" and pulled["items"] == 1
    code, status, _ = run(database_url, drop, "drop", "status")
    batch = status["open_batch"]
    assert (batch["items"], batch["decided"]) == (1, 0) and batch["deadline"].startswith("20")
    code, overall, _ = run(database_url, drop, "status")
    assert overall["compliance"]["drop"]["open_batch"]["deadline"] == batch["deadline"]
    assert overall["compliance"]["drop"]["next_deadline"] == batch["deadline"]
    code, refused, _ = run(database_url, drop, "drop", "pull")
    assert code == 1 and refused["error"]["code"] == "open_batch"

    code, answered, _ = run(database_url, drop, "drop", "report")
    assert code == 0 and answered["counts"] == {"deleted": 1} and drop.answers == {"CliItem00001": "3"}
    # The Phone list came empty (header only): DROP asks no answer for it.
    assert answered["files"] == [f"{DATE}_{BROKER}_Email.csv"]
    async with app.state.database.read_sessions() as session:
        email = await session.scalar(text("SELECT email FROM contacts WHERE id = :id"), {"id": int(person[3:])})
    assert email is None

    listed = tmp_path / "full.txt"
    listed.write_text("202,5550143\n2025550199\n")
    code, imported, _ = run(database_url, drop, "dnc", "import", str(listed), "--full", "--version-date", "2026-11-14")
    assert code == 0 and [a["area_code"] for a in imported["area_codes"]] == ["202"]
    code, compliance, _ = run(database_url, drop, "privacy", "status")
    assert code == 0 and [a["area_code"] for a in compliance["dnc"]["area_codes"]] == ["202"]
    assert compliance["drop"]["open_batch"] is None and compliance["audit_entries"] >= 4

    code, verified, _ = run(database_url, drop, "privacy", "audit", "--verify")
    assert code == 0 and verified["ok"] is True and verified["entries"] == compliance["audit_entries"]
    await _tamper(app)
    code, broken, _ = run(database_url, drop, "privacy", "audit", "--verify")
    assert code == 1 and broken["ok"] is False and broken["first_broken"] == 2


async def _tamper(app: FastAPI) -> None:
    """Changes the second entry's facts behind the triggers' back, as someone with the database could."""
    database = app.state.database
    async with database.write_engine.begin() as conn:
        if database.is_sqlite:
            triggers = (
                await conn.execute(
                    text(
                        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'compliance_events'"
                    )
                )
            ).all()
            for name, _ in triggers:
                await conn.execute(text(f'DROP TRIGGER "{name}"'))
            await conn.execute(text("UPDATE compliance_events SET detail = '{}' WHERE id = 2"))
            for _, sql in triggers:
                await conn.execute(text(sql))
        else:
            await conn.execute(text("ALTER TABLE compliance_events DISABLE TRIGGER USER"))
            await conn.execute(text("UPDATE compliance_events SET detail = '{}' WHERE id = 2"))
            await conn.execute(text("ALTER TABLE compliance_events ENABLE TRIGGER USER"))
