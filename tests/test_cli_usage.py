"""The `vpx` command's usage and exit statuses, run as the real command (issue 39): under --json a
usage error is one JSON object like every other error, not a box; bad input exits 2 and a failure
exits 1, whichever way the command learns of it; help summaries read as one sentence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from fastapi import FastAPI

from tests.conftest import TEST_SECRET_KEY
from vpx.cli.app import app as cli_app

VPX = str(Path(sys.executable).with_name("vpx"))


def run(*args: str, database_url: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("VPX_")}
    env.update({"VPX_LOG_LEVEL": "WARNING", "VPX_SECRET_KEYS": TEST_SECRET_KEY, "COLUMNS": "200"})
    if database_url is not None:
        env["VPX_DATABASE_URL"] = database_url
    return subprocess.run([VPX, *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sources", "add", "x", "--json"], "Missing argument 'kind'."),
        (["sources", "add", "x", "nucc", "--url", "http://a.example/n.csv", "--bogus", "--json"], "No such option"),
        (["keys", "create", "--account", "acc_x", "--type", "admin", "--json"], "must be one of: ro, live, full"),
        (["serve", "--port", "eighty", "--json"], "must be a whole number"),
        (["nosuch", "--json"], "No such command 'nosuch'."),
        (["status", "--json", "true"], "take no value"),
    ],
)
def test_a_usage_error_under_json_is_one_json_object_and_exits_2(args: list[str], message: str) -> None:
    done = run(*args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == "" and done.stdout.count("\n") == 1, done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "invalid_parameters" and message in error["message"], error


def test_a_usage_error_without_json_is_still_told_on_the_terminal() -> None:
    done = run("sources", "add", "x")
    assert done.returncode == 2 and done.stdout == "" and "Missing argument" in done.stderr


@pytest.mark.parametrize(
    ("args", "code", "status"),
    [
        # Input the command cannot take: 2, however the command learns of it.
        (("credits", "grant", "--account", "acc_x", "--amount", "abc"), "invalid_parameters", 2),
        (("credits", "grant", "--account", "acc_x", "--amount", "-5"), "invalid_parameters", 2),
        (("suppress", "add", "--reason", "fcra"), "invalid_parameters", 2),
        (("suppress", "add", "--phone", "12", "--reason", "fcra"), "invalid_parameters", 2),  # the service's check
        (("signals", "ingest", "/nonexistent/events.jsonl"), "invalid_parameters", 2),
        (
            ("sources", "add", "x", "permits-csv", "--url", "http://a.example/p.csv", "--mapping", "/no/map.toml"),
            "invalid_parameters",
            2,
        ),
        (("reports", "list", "--status", "maybe"), "invalid_parameters", 2),
        # Understood, and failed: 1.
        (("credits", "grant", "--account", "acc_missing", "--amount", "5"), "not_found", 1),
        (("keys", "revoke", "key_missing"), "not_found", 1),
        (("sources", "show", "nope"), "not_found", 1),
    ],
)
def test_bad_input_exits_2_and_a_failure_exits_1(
    app: FastAPI, database_url: str, args: tuple[str, ...], code: str, status: int
) -> None:
    done = run(*args, "--json", database_url=database_url)
    assert done.returncode == status, done.stdout + done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] == code, error
    assert "Errno" not in error["message"], error


def test_a_mapping_that_cannot_be_read_is_said_in_words(tmp_path: Path) -> None:
    for path, said in ((tmp_path / "missing.toml", "no such file"), (tmp_path, "it is a directory, not a file")):
        done = run("sources", "add", "x", "permits-csv", "--url", "http://a.example/p.csv", "--mapping", str(path),
                   "--json")  # fmt: skip
        assert done.returncode == 2
        assert json.loads(done.stdout)["error"]["message"] == f"--mapping {path}: {said}"


def _commands(command: object, path: list[str]) -> list[tuple[list[str], object]]:
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found += _commands(sub, [*path, name])
    return found


def test_help_paragraphs_have_no_line_breaks_of_their_own() -> None:
    """A docstring's line ends are the source's, not the reader's: rich kept them, so `vpx sources
    --help` broke "Exits 1" from the rest of its sentence."""
    root = typer.main.get_command(cli_app)
    for path, command in _commands(root, ["vpx"]):
        for paragraph in (getattr(command, "help", None) or "").split("\n\n"):
            assert "\n" not in paragraph.strip(), f"{' '.join(path)}: {paragraph!r}"
    done = run("sources", "--help")
    [row] = [line for line in done.stdout.splitlines() if "│ run " in line]
    assert "Exits 1 when the run fails" in row, done.stdout
