"""The README's and the docs' examples read as answers, name the demo's contacts as the demo names
them, and the user guides say their rules in words (issue 39). The examples the demo can answer are
run against it by tests/test_readme_tour.py; this file reads every example, run or not, quickly.

- Every answer shown (a JSON block, the `# …` lines after a command) reads as an answer in the
  notation of tests/shown.py.
- A contact id up to 12,000 is one of the demo's (`vpx demo` loads 12,000 contacts, seed 42, in id
  order): wherever an example gives it a name, city, state, industry, phone, email or website, or a
  sentence writes `ct_47 (Stone Plumbing Corp)`, they are the demo's. Examples of contacts from
  elsewhere (registry files, contributions) use ids above 12,000.
- User guides cite no decision numbers (D1–D36): those stay in docs/decisions.md, code comments and
  tests.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.doc_examples import DOCS, REPO, blocks, commands
from tests.shown import ShownError, glob, is_stream_line, parse
from vpx.demo.generator import demo_contacts

DEMO_CONTACTS = 12_000
FACTS = ("business_name", "city", "state", "industry", "phone", "email", "website", "specialty")
# Sections left out of the checks (none now).
NOT_OURS: dict[Path, tuple[str, str]] = {}


@cache
def demo() -> dict[int, dict[str, Any]]:
    return {number: fields for number, fields in enumerate(demo_contacts(DEMO_CONTACTS, seed=42), start=1)}


def _text(path: Path) -> str:
    text = path.read_text()
    if path in NOT_OURS:
        start, end = NOT_OURS[path]
        text = text[: text.index(start)] + text[text.index(end) :]
    return text


def _answer_text(shown: list[str]) -> str:
    """The JSON part of an answer as shown: headers, a status and a stream's lines left out."""
    lines = [line for line in shown if not re.match(r"^[A-Z][A-Za-z]*(-[A-Za-z]+)+: ", line)]
    if any(line.startswith(("data: ", "id: ", ": ")) for line in lines):
        data = []
        for line in lines:
            if line.startswith("data: "):
                data.append(line[6:])
            elif data and line.strip() and not is_stream_line(line):
                data[-1] += " " + line.strip()
        return "\n".join(data)
    return re.sub(r"^\d{3}\b", "", "\n".join(lines).strip()).strip()


def examples() -> list[tuple[str, str]]:
    """(where, text) of every answer shown in the README and the docs."""
    found = []
    for path in DOCS:
        for block in blocks(path):
            if block.lang == "json":
                found.append((block.where, block.text))
            elif block.lang in ("sh", "console"):
                for command in commands(block):
                    if command.shown and (text := _answer_text(command.shown)):
                        found.append((f"{path.relative_to(REPO)}:{command.line}", text))
    return found


def test_every_answer_shown_reads_as_an_answer() -> None:
    shown = examples()
    assert len(shown) > 50, len(shown)
    unreadable = []
    for where, text in shown:
        for part in re.split(r"\n(?=\{)", text) if text.startswith("{") else [text]:
            try:
                parse(part)
            except (ShownError, ValueError) as exc:
                unreadable.append(f"{where}: {exc}")
    assert not unreadable, "\n".join(unreadable)


def _objects_naming_contacts(text: str) -> list[tuple[int, str]]:
    """(contact number, the object's text) for each object whose `id` or `contact_id` is a contact."""
    found = []
    for match in re.finditer(r'"(?:id|contact_id)"\s*:\s*"ct_(\d+)"', text):
        depth, start = 0, match.start()
        while start > 0:
            start -= 1
            if text[start] == "}":
                depth += 1
            elif text[start] == "{":
                if depth == 0:
                    break
                depth -= 1
        depth, end = 0, match.end()
        while end < len(text):
            if text[end] == "{":
                depth += 1
            elif text[end] == "}":
                if depth == 0:
                    break
                depth -= 1
            end += 1
        found.append((int(match.group(1)), text[start : end + 1]))
    return found


def test_demo_contacts_are_named_as_the_demo_names_them() -> None:
    wrong = []
    named = 0
    for path in DOCS:
        text = _text(path)
        where = path.relative_to(REPO)
        # Answers are written with "# " before each line in shell blocks.
        flat = re.sub(r"(?m)^#\s?", "", text)
        for number, shown in _objects_naming_contacts(flat):
            if number > DEMO_CONTACTS:
                continue
            contact = demo()[number]
            expected = {**contact, "website": contact["website"]}
            for name in FACTS:
                value = re.search(rf'"{name}"\s*:\s*"([^"]*)"', shown)
                if value is None:
                    continue
                named += 1
                if not glob(value.group(1), str(expected.get(name))):
                    wrong.append(f"{where}: ct_{number}'s {name} is {expected.get(name)!r}, not {value.group(1)!r}")
        for match in re.finditer(r"\bct_(\d+) \(([A-Z][^)]*)\)", text):
            number = int(match.group(1))
            if number <= DEMO_CONTACTS and match.group(2) != demo()[number]["business_name"]:
                named += 1
                wrong.append(f"{where}: ct_{number} is {demo()[number]['business_name']!r}, not {match.group(2)!r}")
    assert named > 10
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("path", [p for p in DOCS if p.name != "README.md"], ids=lambda p: p.name)
def test_user_guides_say_their_rules_in_words(path: Path) -> None:
    cited = [
        f"{path.name}:{_text(path)[: m.start()].count(chr(10)) + 1}: {m.group(0)}"
        for m in re.finditer(r"\bD\d{1,2}\b", _text(path))
    ]
    assert not cited, "decision numbers in a user guide (say the rule in words):\n" + "\n".join(cited)


def test_the_readme_cites_no_decision_or_issue_numbers() -> None:
    readme = (REPO / "README.md").read_text()
    assert not re.findall(r"\bD\d{1,2}\b|\bissue \d+", readme)
