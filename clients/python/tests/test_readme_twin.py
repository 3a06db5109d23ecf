"""The README's Python tour, run as written against a live `vpx serve`."""

from __future__ import annotations

import re
import threading
import time
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from typing import Any

import pytest

from client_support import LiveServer, Receiver

README = Path(__file__).resolve().parents[3] / "README.md"
BLOCK = re.compile(r"<!-- python-twin:start -->\s*```python\n(?P<code>.*?)```\s*<!-- python-twin:end -->", re.S)


def readme_code() -> str:
    match = BLOCK.search(README.read_text())
    assert match, "README.md has no python-twin block"
    return match.group("code")


def test_the_readme_python_tour_runs(server: LiveServer, demo_mail_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # What the tour reads: a hot home-services signal in Colorado (the stream and the purchase).
    server.ingest(
        [
            {
                "category": "switching_intent",
                "industry": "home-services",
                "observed_at": "2026-11-20T10:00:00Z",
                "business": {"name": "Front Range Plumbing", "city": "Denver", "state": "CO"},
                "evidence": {"budget": "$20k", "timeline": "Q1", "vendor_evaluation": "comparing two"},
            }
        ]
    )
    with Receiver() as receiver:
        monkeypatch.setenv("VPX_API_URL", server.url)
        monkeypatch.setenv("VPX_LIVE_KEY", server.seed.keys["live"])
        monkeypatch.setenv("VPX_FULL_KEY", server.seed.keys["full"])
        monkeypatch.setenv("VPX_WEBHOOK_URL", f"{receiver.url}/vpx")
        # The demo's mail catcher, as make serve runs it (on a port of the test's).
        monkeypatch.setenv("VPX_DEMO_MAIL_PORT", str(demo_mail_port))
        namespace: dict[str, Any] = {"__name__": "readme_twin"}
        errors: list[BaseException] = []

        def run() -> None:
            try:
                exec(compile(readme_code(), f"{README}#python-twin", "exec"), namespace)
            except BaseException as exc:
                errors.append(exc)

        runner = threading.Thread(target=run, daemon=True)
        runner.start()
        runner.join(timeout=120)  # a limit against hanging, not a measure
        assert not runner.is_alive(), "the README's Python tour did not finish"
        assert errors == []

        delivery = receiver.next()
        event = namespace["on_delivery"](delivery.body, delivery.headers)
        namespace["full"].webhooks.delete(namespace["hook"].id)

    assert event.type == "webhook.test"
    assert namespace["contact"].meta.idempotency_key
    assert namespace["bought"].signal.intent_level == "hot"
    # The sequence's first email, where the README says it lands (var/demo-mail/ under make serve).
    assert namespace["result"].status == "enrolled"
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
