"""The README's Python tour, run as written against a server started as `make serve` starts it (the
Makefile's settings, read through `make -n`) on a fresh demo, as `vpx demo` builds it: every `# →` line
of the README is what the `print` above it printed (the first time, in a loop), `…` standing for any
text (the matching is tests/shown.py's)."""

from __future__ import annotations

import re
import sys
import threading
import time
from collections import defaultdict
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from typing import Any

import pytest
from tests.make_serve import make_serve_settings
from tests.shown import glob

from client_support import Receiver, free_port, live_server, seed_demo

README = Path(__file__).resolve().parents[3] / "README.md"
BLOCK = re.compile(r"<!-- python-twin:start -->\s*```python\n(?P<code>.*?)```\s*<!-- python-twin:end -->", re.S)
SHOWN = "# → "


def readme_code() -> str:
    match = BLOCK.search(README.read_text())
    assert match, "README.md has no python-twin block"
    return match.group("code")


def shown_outputs(code: str) -> dict[int, str]:
    """What the README shows each print printed, by the print's line number: a `# →` line belongs to
    the last line of code above it, which must print."""
    shown: dict[int, str] = {}
    last_code = 0
    for number, line in enumerate(code.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith(SHOWN):
            assert "print(" in code.splitlines()[last_code - 1], f"line {number}: {SHOWN} under no print"
            shown[last_code] = stripped.removeprefix(SHOWN)
        elif stripped and not stripped.startswith("#"):
            last_code = number
    return shown


def test_the_readme_python_tour_prints_what_the_readme_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seed = seed_demo(tmp_path / "vpx.db", count=None)
    mail_port = free_port()
    settings = {name.upper(): value for name, value in make_serve_settings(mail_port).items()}
    settings["RATE_LIMIT"] = "600/minute"  # the service's default, which the tour prints
    with live_server(seed, **settings) as server, Receiver() as receiver:
        monkeypatch.setenv("VPX_API_URL", server.url)
        monkeypatch.setenv("VPX_LIVE_KEY", server.seed.keys["live"])
        monkeypatch.setenv("VPX_FULL_KEY", server.seed.keys["full"])
        monkeypatch.setenv("VPX_WEBHOOK_URL", f"{receiver.url}/vpx")
        monkeypatch.setenv("VPX_DEMO_MAIL_PORT", str(mail_port))
        printed: dict[int, list[str]] = defaultdict(list)

        def recording_print(*values: object, sep: str = " ", **_: Any) -> None:
            printed[sys._getframe(1).f_lineno].append(sep.join(str(value) for value in values))

        code = readme_code()
        namespace: dict[str, Any] = {"__name__": "readme_twin", "print": recording_print}
        errors: list[BaseException] = []

        def run() -> None:
            try:
                exec(compile(code, f"{README}#python-twin", "exec"), namespace)
            except BaseException as exc:
                errors.append(exc)

        runner = threading.Thread(target=run, daemon=True)
        runner.start()
        runner.join(timeout=120)  # a limit against hanging, not a measure
        assert not runner.is_alive(), "the README's Python tour did not finish"
        assert errors == []

        shown = shown_outputs(code)
        assert len(shown) >= 10, shown
        lines = code.splitlines()
        for number, expected in shown.items():
            assert printed[number], f"line {number} printed nothing: {lines[number - 1].strip()}"
            said = printed[number][0]
            where = f"line {number}: {lines[number - 1].strip()}"
            assert glob(expected, said), f"{where}\nprinted {said!r}\nshown   {expected!r}"

        delivery = receiver.next()
        event = namespace["on_delivery"](delivery.body, delivery.headers)
        namespace["full"].webhooks.delete(namespace["hook"].id)

    assert event.type == "webhook.test"
    assert namespace["contact"].meta.idempotency_key
    assert namespace["bought"].signal.intent_level == "hot"
    # The sequence's first email, where the README says it lands (var/demo-mail/ under make serve).
    message = first_caught(server.data_dir / "demo-mail")
    assert message["Subject"] == f"Quick question, {namespace['contact'].business_name}"
    assert message["List-Unsubscribe"].startswith(f"<{server.url}/u/")


def first_caught(folder: Path) -> EmailMessage:
    """The first email the demo's mail catcher keeps in ``folder`` (the worker sends it within moments)."""
    deadline = time.monotonic() + 30  # a limit against hanging, not a measure
    while not (caught := sorted(folder.glob("*.eml"))) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert caught, f"no email in {folder}"
    message = message_from_bytes(caught[0].read_bytes(), policy=default)
    assert isinstance(message, EmailMessage)
    return message
