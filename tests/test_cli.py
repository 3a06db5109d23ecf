"""D35: the real `vpx` command, run as a subprocess against the test database, with --json output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import TEST_SECRET_KEY

VPX = str(Path(sys.executable).with_name("vpx"))


def vpx(database_url: str, *args: str, check: bool = True, environment: dict[str, str] | None = None) -> dict[str, Any]:
    env = {
        **os.environ,
        "VPX_DATABASE_URL": database_url,
        "VPX_LOG_LEVEL": "WARNING",
        "VPX_SECRET_KEYS": TEST_SECRET_KEY,
        **(environment or {}),
    }
    done = subprocess.run([VPX, *args, "--json"], capture_output=True, text=True, env=env, timeout=120)
    if check:
        assert done.returncode == 0, done.stderr + done.stdout
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout  # one JSON object on stdout
    result: dict[str, Any] = json.loads(lines[0])
    return result


async def test_operator_workflow(app: FastAPI, client: httpx.AsyncClient, database_url: str) -> None:
    upgraded = vpx(database_url, "db", "upgrade")
    assert upgraded["status"] == "ok"
    account = vpx(database_url, "accounts", "create", "--name", "Acme Buyers", "--email", "ops@acme.example")
    assert account["id"].startswith("acc_") and account["plan"] == "free" and account["balance"] == 25
    key = vpx(database_url, "keys", "create", "--account", account["id"], "--type", "live", "--ip", "127.0.0.1")
    assert (
        key["id"].startswith("key_") and key["key"].startswith("vpx_live_") and key["ip_allowlist"] == ["127.0.0.1/32"]
    )
    granted = vpx(database_url, "credits", "grant", "--account", account["id"], "--amount", "10.5", "--reason", "pilot")
    assert granted["balance"] == 35.5
    listed = vpx(database_url, "keys", "list", "--account", account["id"])
    assert [k["id"] for k in listed["keys"]] == [key["id"]] and "key" not in listed["keys"][0]

    headers = {"X-API-Key": key["key"]}
    body = (await client.get("/api/v1/account", headers=headers)).json()
    assert body["balance"]["total"] == 35.5

    suppressed = vpx(database_url, "suppress", "add", "--email", "Someone@Example.com", "--reason", "opt_out")
    assert suppressed["value"] == "someone@example.com" and suppressed["created"] is True
    again = vpx(database_url, "suppress", "add", "--email", "someone@example.com", "--reason", "opt_out")
    assert again["created"] is False

    revoked = vpx(database_url, "keys", "revoke", key["id"])
    assert revoked["revoked_at"] is not None
    assert (await client.get("/api/v1/account", headers=headers)).status_code == 401


@pytest.mark.parametrize(
    "args",
    [
        ("credits", "grant", "--account", "acc_missing", "--amount", "5"),
        ("credits", "grant", "--account", "acc_x", "--amount", "-5"),
        ("credits", "grant", "--account", "acc_x", "--amount", "abc"),
        ("keys", "create", "--account", "acc_missing", "--type", "ro"),
        ("keys", "revoke", "key_missing"),
        ("suppress", "add", "--phone", "12", "--reason", "fcra"),
        ("suppress", "add", "--reason", "fcra"),
    ],
)
def test_errors_are_json_with_a_nonzero_exit(app: FastAPI, database_url: str, args: tuple[str, ...]) -> None:
    result = vpx(database_url, *args, check=False)
    assert set(result) == {"error"}
    assert result["error"]["code"] in {"not_found", "invalid_parameters"}


def test_demo_loads_a_catalogue_and_its_signals_and_prints_one_key_of_each_type(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'demo.db'}"
    data = {"VPX_DATA_DIR": str(tmp_path / "var")}
    first = vpx(url, "demo", "--count", "1000", environment=data)
    assert first["contacts_added"] == 1000 and first["contacts"] == 1000
    assert first["signals_added"] == 200 and first["signals"] == 200  # at least 200, one per ten contacts
    assert sorted(first["keys"]) == ["full", "live", "ro"]
    assert first["keys"]["ro"].startswith("vpx_ro_")
    # The keys are kept for the next run, readable by their owner only.
    saved = tmp_path / "var" / "demo-keys.json"
    assert first["keys_file"] == str(saved) and (saved.stat().st_mode & 0o777) == 0o600
    assert json.loads(saved.read_text())["keys"] == first["keys"]
    # Run again (make serve a second time): the same keys, none revoked.
    second = vpx(url, "demo", "--count", "1000", environment=data)
    assert second["contacts_added"] == 0 and second["signals_added"] == 0 and second["signals"] == 200
    assert second["account_id"] == first["account_id"] and second["keys"] == first["keys"]
    assert second["earlier_keys_revoked"] == 0
    listed = vpx(url, "keys", "list", "--account", first["account_id"])["keys"]
    assert len([k for k in listed if k["revoked_at"] is None]) == 3
    # The file gone: new keys, and the output says the earlier ones were revoked.
    saved.unlink()
    third = vpx(url, "demo", "--count", "1000", environment=data)
    assert set(third["keys"].values()).isdisjoint(first["keys"].values()) and third["earlier_keys_revoked"] == 3
    assert json.loads(saved.read_text())["keys"] == third["keys"]
