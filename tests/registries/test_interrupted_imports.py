"""An import that stops half-way — a cut-off file, a corrupt one, a killed process — leaves the
catalogue consistent, and running it again finishes the job without duplicates. And the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi import FastAPI

from tests.registries.conftest import Importer, catalogue_counts
from tests.registries.formats import write_cslb
from vpx.registries import importer
from vpx.registries.reader import ImportFailed

VPX = str(Path(sys.executable).parent / "vpx")


def _licences(count: int) -> list[dict[str, str]]:
    return [
        {
            "LicenseNo": str(1200000 + i),
            "BusinessName": f"TRUCKEE ROOFING CREW {i:04d} INC",
            "MailingAddress": f"{10 + i} LAKE ST",
            "City": "TRUCKEE",
            "State": "CA",
            "ZIPCode": "96161",
            "BusinessPhone": f"(530) 555 {i:04d}",
            "BusinessType": "Corporation",
            "PrimaryStatus": "CLEAR",
            "Classifications(s)": "C39",
        }
        for i in range(count)
    ]


async def test_a_cut_off_file_imports_its_complete_rows_and_says_so(
    app: FastAPI, run_import: Importer, tmp_path: Path
) -> None:
    full = write_cslb(tmp_path / "full.csv", _licences(40))
    data = full.read_bytes()
    cut = tmp_path / "cut.csv"
    cut.write_bytes(data[: data.index(b"TRUCKEE ROOFING CREW 0025") + 12])  # inside row 26
    summary = await run_import("cslb", cut, batch_size=10)
    assert not summary.complete and summary.error is not None and summary.error["code"] == "truncated_file"
    assert summary.skipped["truncated_row"] == 1 and summary.created == 25
    counts = await catalogue_counts(app)
    assert counts["contacts"] == summary.created and counts["contacts_without_source"] == 0
    assert counts["records"] == counts["sources"] == counts["contacts"]

    finished = await run_import("cslb", full, batch_size=10)
    assert finished.complete and finished.created == 40 - summary.created
    assert (await catalogue_counts(app))["contacts"] == 40


async def test_a_killed_import_leaves_whole_batches_and_resumes(
    app: FastAPI, run_import: Importer, tmp_path: Path
) -> None:
    path = write_cslb(tmp_path / "master.csv", _licences(50))
    batches = 0

    def kill_after_two_batches(_: importer.Progress) -> None:
        nonlocal batches
        batches += 1
        if batches == 2:
            raise KeyboardInterrupt  # what a Ctrl-C or a killed worker looks like between batches

    with pytest.raises(KeyboardInterrupt):
        await run_import("cslb", path, batch_size=10, progress=kill_after_two_batches)
    counts = await catalogue_counts(app)
    assert counts["contacts"] == 20 and counts["sources"] == 20 and counts["records"] == 20
    resumed = await run_import("cslb", path, batch_size=10)
    assert (resumed.created, resumed.unchanged) == (30, 20)
    assert (await catalogue_counts(app))["contacts"] == 50


async def test_a_file_of_another_source_is_refused_before_writing(
    app: FastAPI, run_import: Importer, tmp_path: Path
) -> None:
    path = tmp_path / "not_nppes.csv"
    path.write_text("Code,Type,Classification\n101Y00000X,Counselor,Counselor\n")
    with pytest.raises(ImportFailed) as failure:
        await run_import("cslb", path)
    assert failure.value.code == "unexpected_layout"
    assert (await catalogue_counts(app))["contacts"] == 0


async def test_bad_rows_are_skipped_with_their_reasons(app: FastAPI, run_import: Importer, tmp_path: Path) -> None:
    rows = _licences(3)
    rows[0]["State"] = "ZZ"
    rows[1]["LicenseNo"] = "12A"
    summary = await run_import("cslb", write_cslb(tmp_path / "master.csv", rows))
    assert summary.created == 1
    assert dict(summary.skipped) == {"invalid_state": 1, "invalid_licence_number": 1}
    assert summary.as_dict()["skip_examples"]["invalid_state"] == ["line 1: licence 1200000, state 'ZZ'"]


def test_the_cli_prints_one_json_summary_and_fails_clearly(database_url: str, tmp_path: Path) -> None:
    if not database_url.startswith("sqlite"):
        pytest.skip("the CLI test runs once, on SQLite")
    env = {**os.environ, "VPX_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}", "VPX_LOG_LEVEL": "WARNING"}
    path = write_cslb(tmp_path / "master.csv", _licences(5))
    command = [VPX, "import", "cslb", str(path), "--json"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["rows_read"], summary["created"], summary["skipped"], summary["complete"]) == (5, 5, {}, True)

    assert summary["mode"] == "batches"  # auto: a small file goes in batches
    forced = [VPX, "import", "cslb", str(path), "--mode", "bulk", "--json"]
    done = subprocess.run(forced, capture_output=True, text=True, env=env, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["mode"] == "bulk" and json.loads(done.stdout)["unchanged"] == 5
    unknown = [VPX, "import", "cslb", str(path), "--mode", "fast", "--json"]
    done = subprocess.run(unknown, capture_output=True, text=True, env=env, check=False, timeout=120)
    assert done.returncode != 0 and json.loads(done.stdout)["error"]["code"] == "invalid_parameters"

    missing = [VPX, "import", "nppes", str(path), "--json"]
    refused = subprocess.run(missing, capture_output=True, text=True, env=env, check=False, timeout=120)
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["error"]["code"] == "taxonomy_missing"


async def test_the_reader_process_imports_like_the_reader_thread(
    app: FastAPI, run_import: Importer, tmp_path: Path, backend: str
) -> None:
    # Large files are read in a process of its own; a small one is forced through that path here.
    if backend != "sqlite":
        pytest.skip("the reader does not depend on the database; once is enough")
    path = write_cslb(tmp_path / "master.csv", _licences(30))
    summary = await run_import("cslb", path, batch_size=8, reader="process")
    assert (summary.rows_read, summary.created, summary.complete) == (30, 30, True)
    again = await run_import("cslb", path, batch_size=8, reader="thread")
    assert again.unchanged == 30
