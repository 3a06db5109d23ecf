"""The README's Python tour, run as written against a live `vpx serve`."""

from __future__ import annotations

import re
import threading
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


def test_the_readme_python_tour_runs(server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> None:
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
