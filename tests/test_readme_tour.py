"""The README's tour with curl is a test: every command in it runs, with the real curl, against a
server started the way `make serve` starts it (`vpx demo`, then `vpx serve` with the settings the
Makefile gives it, on the embedded database), and every answer the README shows is compared with the
answer, value by value (tests/shown.py says how `…` and the other elisions are read): headers, the
JSON body, a stream's first lines.

What a reader replaces with their own is replaced here the same way: the keys the demo printed, ids
the README writes as `sg_…` (taken from the answers before them, as a reader would), the ports (a free
one for the server and one for the demo's mail catcher, where the README has :8000 and 2525, in the
commands and in the answers shown), and the stream is cut after a moment. The sequence's first email
is then looked for where the README says it lands (the catcher's folder in the data directory,
`var/demo-mail/` under make serve).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_SECRET_KEY
from tests.dashboard.live_server import free_port
from tests.doc_examples import DOCS, blocks, commands
from tests.faults.support import VPX, VpxServer
from tests.make_serve import make_serve_settings
from tests.shown import answer_problems, glob

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


# A line that shows an answer: a JSON value (or its continuation), a header, a status, a stream's line.
_ANSWER_LINE = re.compile(r"^# ( |\{|\[|\d{3} |[A-Z][A-Za-z]*-[A-Za-z-]+: |:|id: |event: |data: |retry: )|^#$")


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
        elif answering and steps and _ANSWER_LINE.match(line):
            steps[-1].shown.append(line[2:])
        else:
            answering = False
    assert not pending, pending
    return steps


def _balanced(command: str) -> bool:
    """Whether the command's single quotes are closed (a trailing `   # comment` aside)."""
    return re.sub(r"\s{2,}#.*$", "", command).count("'") % 2 == 0


@dataclass
class Tour:
    env: dict[str, str]
    mail_port: int
    ids: dict[str, str] = field(default_factory=dict)  # the latest id seen of each prefix (ct, sg, mbx…)

    def fill(self, command: str) -> str:
        # The ports of this run (the README's are make serve's defaults), and the stream cut.
        command = command.replace('"smtp_port":2525', f'"smtp_port":{self.mail_port}')
        command = command.replace("curl -N ", "curl -N --max-time 3 ")
        for prefix in ("sg", "mbx", "seq", "site", "abr"):
            if prefix in self.ids:
                command = command.replace(f"{prefix}_…", self.ids[prefix])
        return command

    def fill_shown(self, line: str, server_url: str) -> str:
        """An answer as shown, with this run's ports where the README has make serve's."""
        line = line.replace('"smtp_port":2525', f'"smtp_port":{self.mail_port}')
        return line.replace("http://127.0.0.1:8000", server_url)

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


@dataclass
class Served:
    server: VpxServer
    tour: Tour
    data: Path
    demo: dict[str, Any]  # what `vpx demo --json` printed


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The demo, and `vpx serve` started as `make serve` starts it, for the README's tour and then the
    docs' examples (which go on from where the tour left the demo account)."""
    folder = tmp_path_factory.mktemp("tour")
    database_url = f"sqlite+aiosqlite:///{folder / 'vpx.db'}"
    data = folder / "var"  # the data directory: `var` under make serve
    mail_port = free_port()
    # As `make serve` runs it (the demo feed, the dashboard's emails to the log, the mail catcher,
    # webhooks to this machine), and no more: mail hosts are guarded as they are there.
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
    printed = json.loads(demo.stdout.strip().splitlines()[-1])
    keys = printed["keys"]
    server = VpxServer(database_url, folder / "serve.log", settings)
    try:
        variables = {"KEY": keys["live"], "FULL": keys["full"], "API": f"{server.url}/api/v1", "BASE": server.url}
        yield Served(server, Tour(variables, mail_port), data, printed)
    finally:
        server.stop()


def _run_and_compare(served: Served, command: str, shown: list[str]) -> None:
    tour, server = served.tour, served.server
    status, headers, body = run(tour, command)
    # The auto-buy rule buys the contacts of the demo feed's next matching signals (the feed adds a few
    # every 20 s, as under `make serve`): ask again until they show, as a reader would.
    deadline = time.monotonic() + FEED_WAIT_S
    while "auto-buy/purchases" in command and '"purchases":[]' in body and time.monotonic() < deadline:
        time.sleep(2)
        status, headers, body = run(tour, command)
    where = f"\n{command}\n→ {status} {body[:800]}"
    shows_a_failure = '"status":4' in "".join(shown) or bool(re.match(r"\d{3} ", "".join(shown)))
    if not shows_a_failure:
        assert 200 <= status < 300, where
    problems = answer_problems([tour.fill_shown(line, server.url) for line in shown], status, headers, body)
    assert not problems, "another answer than the one shown:\n" + "\n".join(problems) + where
    if "text/event-stream" not in headers.get("content-type", "") and body.strip():
        tour.learn(json.dumps(json.loads(body), separators=(",", ":")))


def test_what_make_serve_prints_is_what_the_demo_prints(served: Served) -> None:
    """The table the README shows `make serve` printing: the demo's figures, its keys' forms."""
    table = dict(re.findall(r"^│ (\S[^│]*?)\s+│ (\S[^│]*?)\s+│$", README.read_text(), re.M))
    printed = served.demo
    labels = {"Read Only key": "ro", "Standard key": "live", "Full Access key": "full"}
    assert {"contacts_added", "contacts", "signals_added", "signals", "account_id", *labels} <= set(table)
    for name, shown in table.items():
        value = printed["keys"][labels[name]] if name in labels else printed.get(name)
        if name == "keys_file":
            assert shown.startswith("var/demo-keys.json") and str(value).endswith("/var/demo-keys.json")
        else:
            assert glob(shown, str(value)), f"{name}: the README shows {shown!r}, the demo printed {value!r}"


def test_every_command_of_the_tour_runs_and_answers_as_shown(served: Served) -> None:
    steps = tour_steps()
    assert len(steps) >= 15, [s.command for s in steps]
    for step in steps:
        command = served.tour.fill(step.command)
        assert "…" not in command.split("-d", 1)[0], f"a placeholder the tour never filled: {command}"
        _run_and_compare(served, command, step.shown)
    assert sum(bool(step.shown) for step in steps) >= 20
    for prefix in ("ct", "sg", "mbx", "seq", "site"):
        assert prefix in served.tour.ids, f"the tour never met a {prefix}_ id: {served.tour.ids}"
    # The sequence's first email, where the README says to look, its unsubscribe link on this port.
    assert "\nls var/demo-mail/ " in README.read_text()
    message = first_caught(served.data / "demo-mail")
    assert message["Subject"].startswith("Quick question, ") and message["From"].endswith("<sam@acme.example>")
    assert message["List-Unsubscribe"].startswith(f"<{served.server.url}/u/")


def test_every_example_of_the_docs_answers_as_shown(served: Served) -> None:
    """The docs' `curl` examples, run in each page's order after the README's tour, each answer
    compared with the one shown; blocks marked `<!-- example: … -->` show what the demo cannot answer
    and are read, not run (tests/test_docs_examples.py)."""
    compared = 0
    for path in DOCS:
        if path.name == "README.md":
            continue
        for block in blocks(path):
            if block.lang not in ("sh", "console") or block.example is not None:
                continue
            for command in commands(block):
                where = f"{path.name}:{command.line}: {command.text}"
                if not command.text.startswith("curl "):
                    assert not command.shown, f"{where}: only curl examples can be run: mark its block"
                    continue
                filled = served.tour.fill(command.text)
                if "…" in filled.split("-d", 1)[0]:
                    assert not command.shown, f"{where}: a placeholder this page never fills"
                    continue
                _run_and_compare(served, filled, command.shown)
                compared += bool(command.shown)
    assert compared >= 10, compared


def first_caught(folder: Path) -> EmailMessage:
    """The first email the demo's mail catcher keeps in ``folder`` (the worker sends it within moments)."""
    deadline = time.monotonic() + MAIL_WAIT_S
    while not (caught := sorted(folder.glob("*.eml"))) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert caught, f"no email in {folder} within {MAIL_WAIT_S} s"
    message = message_from_bytes(caught[0].read_bytes(), policy=default)
    assert isinstance(message, EmailMessage)
    return message
