"""The README's tour with curl is a test: every command in it runs, with the real curl, against a
server started the way `make serve` starts it (`vpx demo`, then `vpx serve` with the settings the
Makefile gives it, on the embedded database), and what the README shows of each answer stays true
(its status class, the fields and headers shown).

What a reader replaces with their own is replaced here the same way: the keys the demo printed, ids
the README writes as `ct_8442` or `sg_…` (taken from the answers before them, as a reader would), the
ports (a free one for the server and one for the demo's mail catcher, where the README has :8000 and
2525), and the stream is cut after a moment. The sequence's first email is then looked for where the
README says it lands (the catcher's folder in the data directory, `var/demo-mail/` under make serve).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_SECRET_KEY
from tests.dashboard.live_server import free_port
from tests.faults.support import VPX, VpxServer

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
FEED_WAIT_S = 90.0
MAIL_WAIT_S = 30.0
pytestmark = [
    pytest.mark.skipif(shutil.which("curl") is None, reason="the tour runs the real curl, not installed"),
    pytest.mark.skipif(shutil.which("make") is None, reason="the tour reads make serve's settings with make"),
]


@dataclass
class Step:
    command: str
    shown: list[str] = field(default_factory=list)  # the "# …" lines right after it: its answer as shown


def tour_steps() -> list[Step]:
    text = README.read_text()
    start = text.index("## A tour with curl")
    block = text[start:].split("```sh\n", 1)[1].split("```", 1)[0]
    steps: list[Step] = []
    pending = ""
    answering = False  # within the "# …" lines that show the last command's answer
    for line in block.splitlines():
        if pending:
            pending += "\n" + line
            if not line.endswith("\\") and _balanced(pending):
                steps.append(Step(pending))
                pending = ""
            continue
        if line.startswith("curl "):
            answering = True
            if line.endswith("\\") or not _balanced(line):
                pending = line
            else:
                steps.append(Step(line))
        elif answering and steps and re.match(r"^# ( |\{|\[|[A-Z][A-Za-z]*-[A-Za-z-]+: )", line):
            steps[-1].shown.append(line[2:])
        else:
            answering = False
    assert not pending, pending
    return steps


def _balanced(command: str) -> bool:
    """Whether the command's single quotes are closed (a trailing `   # comment` aside)."""
    return re.sub(r"\s{2,}#.*$", "", command).count("'") % 2 == 0


def shown_fields(shown: list[str]) -> tuple[set[str], set[str], int | None]:
    """The JSON field names and the headers the README shows, and the status it shows (if any)."""
    fields: set[str] = set()
    headers: set[str] = set()
    status = None
    for line in shown:
        header = re.match(r"^([A-Z][A-Za-z]*-[A-Za-z-]+): ", line)
        if header:
            headers.add(header.group(1).lower())
            continue
        if line.lstrip().startswith(("{", '"')):
            fields.update(re.findall(r'"([a-z_]+)":', line))
            found = re.search(r'"status":(\d{3})\b', line)
            if found:
                status = int(found.group(1))
    return fields, headers, status


def make_serve_settings(mail_port: int) -> dict[str, str]:
    """The VPX_* settings the Makefile's `serve` target gives `vpx serve` (names without the prefix), as
    `make -n` prints them with no VPX_* variable in the environment, the demo's mail catcher on
    ``mail_port``."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("VPX_")}
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "serve", f"DEMO_MAIL_PORT={mail_port}"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    [line] = [line for line in done.stdout.splitlines() if "vpx serve" in line]
    found = dict(re.findall(r"\bVPX_([A-Z_]+)=(\S+)", line))
    assert found.get("DEMO_MAIL_PORT") == str(mail_port), line
    return {name.lower(): value for name, value in found.items()}


@dataclass
class Tour:
    env: dict[str, str]
    mail_port: int
    ids: dict[str, str] = field(default_factory=dict)  # the latest id seen of each prefix (ct, sg, mbx…)

    def fill(self, command: str) -> str:
        # The ports of this run (the README's are make serve's defaults), and the stream cut.
        command = command.replace('"smtp_port":2525', f'"smtp_port":{self.mail_port}')
        command = command.replace("curl -N ", "curl -N --max-time 3 ")
        if "ct" in self.ids:
            command = re.sub(r"\bct_\d+\b", self.ids["ct"], command)
        for prefix in ("sg", "mbx", "seq", "site", "abr"):
            if prefix in self.ids:
                command = command.replace(f"{prefix}_…", self.ids[prefix])
        return command

    def learn(self, body: str) -> None:
        for value in re.findall(r'"(?:id|[a-z]+_id)":"((?:ct|sg|mbx|seq|site|abr)_[A-Za-z0-9]+)"', body):
            prefix = value.split("_", 1)[0]
            if prefix == "sg" and '"source_status":"fcra_blocked"' in body and "sg" in self.ids:
                continue
            self.ids.setdefault(prefix, value) if prefix in ("ct", "sg") else self.ids.__setitem__(prefix, value)


def run(tour: Tour, command: str) -> tuple[int, dict[str, str], str]:
    """Runs the command in a shell with the tour's variables; returns status, headers and body."""
    traced = command.replace("curl ", "curl -s -i ", 1) if " -i " not in command else command
    done = subprocess.run(
        ["bash", "-c", traced], capture_output=True, text=True, env={**os.environ, **tour.env}, timeout=30
    )
    output = done.stdout.replace("\r\n", "\n")
    if "\n\n" not in output:
        raise AssertionError(f"no HTTP answer from: {command}\n{done.stdout}{done.stderr}")
    head, body = output.split("\n\n", 1)
    status_line, *header_lines = head.splitlines()
    headers = {k.strip().lower(): v.strip() for k, v in (h.split(":", 1) for h in header_lines if ":" in h)}
    return int(status_line.split()[1]), headers, body


def test_every_command_of_the_tour_runs_and_answers_as_shown(tmp_path: Path) -> None:
    database_url = f"sqlite+aiosqlite:///{tmp_path / 'vpx.db'}"
    data = tmp_path / "var"  # the data directory: `var` under make serve
    mail_port = free_port()
    # As `make serve` runs it (the demo feed, the dashboard's emails to the log, the mail catcher), and no
    # more: mail and webhook hosts are guarded as they are there.
    settings = {**make_serve_settings(mail_port), "data_dir": str(data)}
    env = {
        **{name: value for name, value in os.environ.items() if not name.startswith("VPX_")},
        "VPX_DATABASE_URL": database_url,
        "VPX_SECRET_KEYS": TEST_SECRET_KEY,
        "VPX_LOG_LEVEL": "WARNING",
        "VPX_DATA_DIR": str(data),
    }
    demo = subprocess.run([VPX, "demo", "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert demo.returncode == 0, demo.stderr
    keys = json.loads(demo.stdout.strip().splitlines()[-1])["keys"]
    server = VpxServer(database_url, tmp_path / "serve.log", settings)
    try:
        tour = Tour({"KEY": keys["live"], "FULL": keys["full"], "API": f"{server.url}/api/v1"}, mail_port)
        steps = tour_steps()
        assert len(steps) >= 15, [s.command for s in steps]
        for step in steps:
            command = tour.fill(step.command)
            assert "…" not in command.split("-d", 1)[0], f"a placeholder the tour never filled: {command}"
            fields, shown_headers, shown_status = shown_fields(step.shown)
            status, headers, body = run(tour, command)
            # The auto-buy rule buys the contacts of the demo feed's next matching signals (the feed adds
            # a few every 20 s, as under `make serve`): ask again until they show, as a reader would.
            deadline = time.monotonic() + FEED_WAIT_S
            while "auto-buy/purchases" in command and '"purchases":[]' in body and time.monotonic() < deadline:
                time.sleep(2)
                status, headers, body = run(tour, command)
            where = f"\n{command}\n→ {status} {body[:500]}"
            if shown_status is not None:
                assert status == shown_status, where
            elif "/purchase" in command:
                assert status in (200, 451), where  # D21: an fcra_blocked signal is never for sale
            else:
                assert 200 <= status < 300, where
            if "text/event-stream" in headers.get("content-type", ""):
                continue
            answer: Any = json.loads(body) if body.strip() else None
            missing = {name for name in fields if f'"{name}":' not in json.dumps(answer, separators=(",", ":"))}
            assert not missing, f"fields the README shows but the answer lacks: {missing}{where}"
            assert shown_headers <= set(headers), where
            tour.learn(json.dumps(answer, separators=(",", ":")))
        for prefix in ("ct", "sg", "mbx", "seq", "site"):
            assert prefix in tour.ids, f"the tour never met a {prefix}_ id: {tour.ids}"
        # The sequence's first email, where the README says to look, its unsubscribe link on this port.
        assert "\nls var/demo-mail/ " in README.read_text()
        message = first_caught(data / "demo-mail")
        assert message["Subject"].startswith("Quick question, ") and message["From"].endswith("<sam@acme.example>")
        assert message["List-Unsubscribe"].startswith(f"<{server.url}/u/")
    finally:
        server.stop()


def first_caught(folder: Path) -> EmailMessage:
    """The first email the demo's mail catcher keeps in ``folder`` (the worker sends it within moments)."""
    deadline = time.monotonic() + MAIL_WAIT_S
    while not (caught := sorted(folder.glob("*.eml"))) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert caught, f"no email in {folder} within {MAIL_WAIT_S} s"
    message = message_from_bytes(caught[0].read_bytes(), policy=default)
    assert isinstance(message, EmailMessage)
    return message
