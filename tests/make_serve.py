"""What `make serve` gives `vpx serve`: its VPX_* settings, read from the Makefile through `make -n` (so
the tests that start a server "as make serve starts it" follow the Makefile, whatever it says)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def make_serve_settings(mail_port: int) -> dict[str, str]:
    """The VPX_* settings the Makefile's `serve` target gives `vpx serve` (names without the prefix,
    lower case), as `make -n` prints them with no VPX_* variable in the environment, the demo's mail
    catcher on ``mail_port``."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("VPX_")}
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "serve", f"DEMO_MAIL_PORT={mail_port}"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    [line] = [line for line in done.stdout.splitlines() if "vpx serve" in line]
    found = dict(re.findall(r"\bVPX_([A-Z_]+)=(\S+)", line))
    assert found.get("DEMO_MAIL_PORT") == str(mail_port), line
    return {name.lower(): value for name, value in found.items()}
