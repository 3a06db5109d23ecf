"""`vpx sources …` run as the real command against the test database and a fake publisher on
loopback (in-process with typer's runner, in a thread of its own as a command runs its own event
loop; once as a subprocess): every subcommand's --json, bad usage (exit 2), a failed run (exit 1),
secret options never printed, and the sources in `vpx status --json`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from sqlalchemy import text
from typer.testing import CliRunner

from tests.conftest import TEST_SECRET_KEY
from tests.registries.formats import write_nucc
from tests.sources.publisher import Publisher
from tests.sources.test_runs import MAPPING, PERMITS, export
from vpx.cli.app import app as cli_app
from vpx.config import Settings, get_settings
from vpx.secrets import load_box
from vpx.sources import runner

VPX = str(Path(sys.executable).with_name("vpx"))
VIEW_KEYS = {
    "name", "kind", "url", "every", "state", "stale", "running", "run_requested", "last_success_at", "age_seconds",
    "newest_record_at", "next_run_at", "last_run", "last_error", "consecutive_failures", "options", "mapping",
    "totals", "created_at",
}  # fmt: skip
REPORT_KEYS = {
    "source", "kind", "status", "started_at", "finished_at", "seconds", "requests", "bytes_downloaded", "rows_read",
    "created", "updated", "deactivated", "unchanged", "ingested", "duplicates", "skipped", "newest_record_at",
    "files", "error", "last_applied",
}  # fmt: skip


def environment(settings: Settings) -> dict[str, str]:
    return {
        "VPX_DATABASE_URL": settings.database_url,
        "VPX_DATA_DIR": str(settings.data_dir),
        "VPX_LOG_LEVEL": "WARNING",
        "VPX_SECRET_KEYS": TEST_SECRET_KEY,
    }


def _invoke(settings: Settings, args: tuple[str, ...], code: int) -> dict[str, Any]:
    get_settings.cache_clear()
    try:
        done = CliRunner().invoke(cli_app, [*args, "--json"], env=environment(settings))
    finally:
        get_settings.cache_clear()
    assert done.exit_code == code, (done.output, done.exception)
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout  # one JSON object on stdout
    found: dict[str, Any] = json.loads(lines[0])
    return found


async def vpx(settings: Settings, *args: str, code: int = 0) -> dict[str, Any]:
    return await asyncio.to_thread(_invoke, settings, args, code)


async def test_the_sources_commands(app: FastAPI, settings: Settings, publisher: Publisher, tmp_path: Path) -> None:
    publisher.serve("/nucc_taxonomy_251.csv", write_nucc(tmp_path / "nucc.csv").read_bytes())
    added = await vpx(settings, "sources", "add", "nucc", "nucc", "--url", publisher.url("/nucc_taxonomy_251.csv"),
                "--every", "1w")  # fmt: skip
    assert set(added) == VIEW_KEYS
    assert (added["state"], added["every"], added["last_run"], added["age_seconds"]) == ("active", "1w", None, None)
    assert added["next_run_at"] is not None and added["options"] == {}

    ran = await vpx(settings, "sources", "run", "nucc")
    assert set(ran) == REPORT_KEYS
    assert (ran["source"], ran["status"], ran["rows_read"], ran["created"], ran["error"]) == ("nucc", "ok", 8, 8, None)
    assert ran["last_applied"] is None  # it applied something itself
    again = await vpx(settings, "sources", "run", "nucc")
    assert (again["status"], again["requests"], again["created"]) == ("not_modified", 1, 0)

    listed = await vpx(settings, "sources", "list")
    [shown] = listed["sources"]
    assert set(shown) == VIEW_KEYS and shown["last_run"]["status"] == "not_modified"
    assert shown["last_success_at"] is not None and shown["age_seconds"] is not None and shown["age_seconds"] >= 0
    assert shown["totals"]["runs_ok"] == 1 and shown["totals"]["runs_not_modified"] == 1
    alone = await vpx(settings, "sources", "show", "nucc")
    assert {**alone, "age_seconds": None} == {**shown, "age_seconds": None}

    paused = await vpx(settings, "sources", "pause", "nucc")
    assert (paused["state"], paused["next_run_at"]) == ("paused", None)
    resumed = await vpx(settings, "sources", "resume", "nucc")
    assert resumed["state"] == "active" and resumed["next_run_at"] is not None

    status = await vpx(settings, "status")
    [fresh] = status["sources"]
    assert fresh["name"] == "nucc" and fresh["state"] == "active" and fresh["stale"] is False
    assert {"ready", "workers", "waiting"} <= set(status)

    removed = await vpx(settings, "sources", "remove", "nucc")
    assert removed["removed"] is True
    # The installed command itself, once.
    done = await asyncio.to_thread(
        subprocess.run, [VPX, "sources", "list", "--json"], capture_output=True, text=True, timeout=120,
        env={**os.environ, **environment(settings)},
    )  # fmt: skip
    assert (done.returncode, json.loads(done.stdout)) == (0, {"sources": []}), done.stderr
    missing = await vpx(settings, "sources", "show", "nucc", code=1)
    assert missing["error"]["code"] == "not_found"


async def test_bad_usage_exits_2_naming_the_value(app: FastAPI, settings: Settings, tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/nucc.csv"
    cases = {
        ("x", "nucc", "--url", url, "--every", "30s"): "--every: must be at least 1m (a minute)",
        ("x", "nucc", "--url", url, "--every", "often"): "--every: 'often' is not an interval such as 30m, 6h",
        ("x", "ftp", "--url", url): "KIND: 'ftp' is not a kind of source; kinds: cslb, edgar-daily, nppes, nucc, "
                                      "permits-arcgis, permits-csv, permits-socrata",
        ("X Y", "nucc", "--url", url): "NAME: use 1-63 lower-case letters, digits, - or _, starting with a",
        ("x", "nucc", "--url", "ftp://example.org/f.csv"): "--url: must be an http:// or https:// URL",
        ("x", "nucc", "--url", url, "--option", "token=1"): "--option token: nucc takes no such option",
        ("x", "nucc", "--url", url, "--option", "novalue"): "--option: 'novalue' is not key=value",
        ("x", "permits-csv", "--url", url): "--mapping: permits-csv needs a mapping (--mapping FILE)",
    }  # fmt: skip
    for args, message in cases.items():
        refused = await vpx(settings, "sources", "add", *args, code=2)
        assert refused["error"]["code"] == "invalid_parameters"
        assert refused["error"]["message"].startswith(message), (args, refused)
    bad_mapping = tmp_path / "bad.toml"
    bad_mapping.write_text('city = "Ogden"\n')
    refused = await vpx(
        settings, "sources", "add", "x", "permits-csv", "--url", url, "--mapping", str(bad_mapping), code=2
    )
    assert refused["error"]["message"].startswith("--mapping: ")
    assert await vpx(settings, "sources", "list") == {"sources": []}


async def test_a_failed_run_exits_1_and_a_secret_option_is_never_printed(
    app: FastAPI, settings: Settings, publisher: Publisher, tmp_path: Path
) -> None:
    mapping = tmp_path / "ogden.toml"
    mapping.write_text(MAPPING)
    publisher.serve("/permits.csv", export(*PERMITS))
    publisher.down["/permits.csv"] = 503
    secret = "app-token-0123456789"
    added = await vpx(settings, "sources", "add", "ogden", "permits-csv", "--url", publisher.url("/permits.csv"),
                "--mapping", str(mapping), "--option", f"app_token={secret}")  # fmt: skip
    assert added["options"] == {"app_token": "(secret)"} and added["mapping"] == "ogden"
    failed = await vpx(settings, "sources", "run", "ogden", code=1)
    assert failed["status"] == "failed" and failed["error"]["code"] == "server_error"
    assert all(r.headers.get("x-app-token") == secret for r in publisher.requests_for("/permits.csv"))
    shown = await vpx(settings, "sources", "show", "ogden")
    assert shown["state"] == "failing" and shown["last_error"] == failed["error"]["message"]
    del publisher.down["/permits.csv"]
    ok = await vpx(settings, "sources", "run", "ogden")
    assert (ok["status"], ok["ingested"]) == ("ok", 2)
    assert (await vpx(settings, "sources", "show", "ogden"))["state"] == "active"
    listed = json.dumps(await vpx(settings, "sources", "list"))
    assert secret not in listed
    async with app.state.database.read_sessions() as session:
        stored = (await session.execute(text("SELECT options, options_sealed FROM data_sources"))).one()
    assert secret not in str(stored[0]) and secret not in str(stored[1])


async def test_a_run_right_after_the_workers_says_what_that_run_did(
    app: FastAPI, settings: Settings, publisher: Publisher, tmp_path: Path
) -> None:
    """A source is due as soon as it is added, so a server's worker often runs it before the operator's
    `vpx sources run` (issue 39): that run then finds nothing new, and says what the worker's did."""
    publisher.serve("/nucc_taxonomy_251.csv", write_nucc(tmp_path / "nucc.csv").read_bytes())
    await vpx(settings, "sources", "add", "nucc", "nucc", "--url", publisher.url("/nucc_taxonomy_251.csv"))
    box = load_box(settings)
    assert await runner.run_due(app.state.database, settings, owner="worker:test", box=box) == 1  # the worker's
    ran = await vpx(settings, "sources", "run", "nucc")
    assert (ran["status"], ran["rows_read"], ran["created"]) == ("not_modified", 0, 0)
    applied = ran["last_applied"]
    assert (applied["rows_read"], applied["created"], applied["updated"]) == (8, 8, 0)
    assert applied["started_at"] is not None and applied["started_at"] < ran["started_at"]
    shown = await vpx(settings, "sources", "show", "nucc")
    assert shown["last_run"]["status"] == "not_modified" and shown["last_run"]["last_applied"] == applied
    # A later run that finds nothing new still names the run that brought the data; one that applies
    # something names none.
    again = await vpx(settings, "sources", "run", "nucc")
    assert again["last_applied"] == applied
    # On a terminal: the report and a line saying what the last run that applied something did.
    get_settings.cache_clear()
    try:
        done = await asyncio.to_thread(
            CliRunner().invoke, cli_app, ["sources", "run", "nucc"], env={**environment(settings), "COLUMNS": "200"}
        )
    finally:
        get_settings.cache_clear()
    assert done.exit_code == 0, done.output
    said = " ".join(done.stdout.replace("│", " ").split())
    assert f"nothing new since the run of {applied['started_at']}, which read 8 rows: 8 created" in said, said
