"""`make test` installs Debian's Chromium for the browser tests when it is missing (the `browser`
target): it says so, says what it runs and where that command's output went, and that output is kept.
Run here with a stand-in apt-get first on the PATH: nothing is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _browser(tmp_path: Path, apt_status: int) -> tuple[str, Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    apt = bin_dir / "apt-get"
    apt.write_text(f'#!/bin/sh\necho "stand-in apt-get $*"\nexit {apt_status}\n')
    apt.chmod(0o755)
    log = tmp_path / "logs" / "chromium-install.log"
    done = subprocess.run(
        ["make", "--no-print-directory", "browser", f"CHROMIUM={tmp_path / 'no-chromium'}", f"BROWSER_LOG={log}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr  # never stops `make test`: the browser tests skip instead
    return done.stdout, log


def test_installing_chromium_says_what_it_runs_and_where_its_output_went(tmp_path: Path) -> None:
    said, log = _browser(tmp_path, apt_status=0)
    assert "apt-get install" in said and "chromium" in said and str(log) in said, said
    assert "stand-in apt-get update" in log.read_text() and "stand-in apt-get install" in log.read_text()


def test_a_failed_install_says_so_and_where_to_read_why(tmp_path: Path) -> None:
    said, log = _browser(tmp_path, apt_status=100)
    assert "could not be installed" in said and str(log) in said and "skipped" in said, said
    assert "stand-in apt-get update" in log.read_text()


def test_nothing_is_said_when_chromium_is_there(tmp_path: Path) -> None:
    present = tmp_path / "chromium"
    present.write_text("#!/bin/sh\n")
    present.chmod(0o755)
    done = subprocess.run(
        ["make", "--no-print-directory", "-s", "browser", f"CHROMIUM={present}"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout == "", done.stdout
