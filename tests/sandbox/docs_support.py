"""Running a guide's Python example as a reader would: the block under a heading, with the reader's own
values put in, its prints compared with the ``# → …`` lines it shows (``…`` standing for any text)."""

from __future__ import annotations

import contextlib
import io
import re

from tests.doc_examples import REPO, blocks
from tests.shown import glob

ARROW = re.compile(r"^\s*# → ?(.*)$")


def example(guide: str, heading: str) -> str:
    """The first Python block after ``heading`` in docs/<guide>."""
    path = REPO / "docs" / guide
    text = path.read_text()
    start = text.index(f"\n{heading}\n")
    line = text.count("\n", 0, start) + 1
    found = [b for b in blocks(path) if b.lang == "python" and b.line > line]
    assert found, f"no Python example under {heading!r} in {guide}"
    return found[0].text


def run(code: str, replacements: dict[str, str]) -> None:
    """Runs the example with ``replacements`` made and checks each print against its ``# →`` line."""
    for shown, value in replacements.items():
        assert shown in code, f"the example has no {shown!r}"
        code = code.replace(shown, value)
    expected = [m.group(1) for line in code.splitlines() if (m := ARROW.match(line))]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "<example>", "exec"), {"__name__": "__example__"})
    lines = printed.getvalue().splitlines()
    assert len(lines) == len(expected), f"printed {lines}, the guide shows {expected}"
    for shown, line in zip(expected, lines, strict=True):
        assert glob(shown, line), f"printed {line!r}, the guide shows {shown!r}"
