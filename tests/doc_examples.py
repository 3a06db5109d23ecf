"""The examples of the README and the docs: their code blocks, the commands in them and the answers
they show (for tests/test_readme_tour.py, which runs them, and tests/test_docs_examples.py, which reads
them).

A block preceded by an HTML comment ``<!-- example: <why> -->`` shows what the demo cannot answer (your
own mail server, your provider keys, registry files of your own): its answers are read, not run. Any
other block's `curl` commands that show an answer are run against the demo and compared with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The guides whose examples are checked: every page a user reads (decisions.md and benchmarks.md
# record choices and figures, and show no answers).
DOCS = [REPO / "README.md", *sorted(p for p in (REPO / "docs").glob("*.md") if p.name not in ("decisions.md",))]
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
_MARK = re.compile(r"<!--\s*example:\s*(.+?)\s*-->\s*$")
# A line that shows an answer after a command: a JSON value (or its continuation), a header, a status,
# a stream's line.
ANSWER_LINE = re.compile(r"^# ( |\{|\[|\d{3}\b|[A-Z][A-Za-z]*-[A-Za-z-]+: |:|id: |event: |data: |retry: )|^#$")
_TRAILING = re.compile(r"\s{2,}# (\{.*)$")


@dataclass
class Command:
    text: str
    line: int
    shown: list[str] = field(default_factory=list)  # the answer's lines, "# " taken off


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence
    lang: str
    text: str
    example: str | None  # why the demo cannot answer it, when it is marked so

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    text = path.read_text()
    found = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = _MARK.search(before)
        line = text.count("\n", 0, match.start()) + 1
        found.append(Block(path, line, match.group(1), match.group(2), mark.group(1) if mark else None))
    return found


def _closed(command: str) -> bool:
    """Whether the command's single quotes are closed and it does not go on (a trailing comment aside)."""
    bare = re.sub(r"\s{2,}#.*$", "", command)
    return bare.count("'") % 2 == 0 and not bare.endswith("\\")


def commands(block: Block) -> list[Command]:
    """The commands of a shell or console block with the answers shown after each: `# …` lines after
    a command in a shell block (and a `# {…}` comment at the end of its line), the lines after a `$ `
    command in a console block."""
    found: list[Command] = []
    pending: Command | None = None
    answering = False
    for number, line in enumerate(block.text.splitlines(), start=block.line + 1):
        if pending is not None:
            pending.text += "\n" + line
            if _closed(pending.text):
                found.append(pending)
                pending = None
            continue
        console = block.lang == "console"
        start = line.startswith("$ ") if console else re.match(r"^(curl|vpx|\.venv/bin/vpx) ", line) is not None
        if start:
            command = Command(line[2:] if console else line, number)
            trailing = _TRAILING.search(line)
            if trailing and not console:
                command.text = line[: trailing.start()]
                command.shown.append(trailing.group(1))
            answering = True
            if _closed(command.text):
                found.append(command)
            else:
                pending = command
        elif answering and found and console and line.strip():
            found[-1].shown.append(line)
        elif answering and found and not console and ANSWER_LINE.match(line):
            found[-1].shown.append(line[2:])
        else:
            answering = False
    assert pending is None, f"{block.where}: a command that never ends: {pending.text}"
    return found
