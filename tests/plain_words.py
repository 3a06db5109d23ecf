"""What no text the product shows a person may contain: CLI help, the OpenAPI document's descriptions
and summaries, and problem details (``detail``, ``title``, ``errors``). tests/test_user_words.py
scans those; tests/conftest.py checks every problem document a test's client receives.

- a decision number (`D15`, `D19, D21`): the rules have numbers for issues, tests and code comments
  (docs/decisions.md); a user is told the rule in words;
- a Python repr or exception name (`Decimal('0.0001')`, `<class 'int'>`, `ValueError`);
- pydantic's and FastAPI's phrasing of a validation error ("Input should be…", "String should have…",
  "Value error, …", "Field required", "Extra inputs are not permitted", "JSON decode error"…): the API
  says "must be at most 100", "is required", "is not a known field";
- a Python type shown as what an option takes (`--json <bool>`, `--ip <list[str]>`, `<int>`).

Text a person sent and that a message quotes back ('D12' is not …) is the person's, not ours:
quoted parts are left out of the check.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

FORBIDDEN: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bD\d{1,2}\b"), "a decision number: say the rule in words"),
    (re.compile(r"Decimal\(|<class |\b[A-Za-z]*(?:Error|Exception)\b(?<!\bError)"), "a Python repr or exception name"),
    (
        re.compile(
            r"\b(?:Input|String|List|Value|Dictionary|Tuple|Set|Decimal input|Data) should\b"
            r"|Value error,|Assertion failed,|Field required|Extra inputs are not permitted|Unable to extract tag"
            r"|expected tags|unable to parse string|after validation|JSON decode error|valid integer"
        ),
        "pydantic's or FastAPI's wording of a validation error",
    ),
    (
        re.compile(r"<(?:bool|str|int|float|path|text|list|dict|datetime|decimal)\b[^>]*>|\b(?:list|dict|tuple)\["),
        "a Python type as a value's kind",
    ),
]
# What a message quotes: a value the client sent, a code or a field name.
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")


def offences(text: str, *, quotes_are_input: bool = False) -> list[str]:
    """Each forbidden thing in ``text``, with what it is."""
    checked = _QUOTED.sub("''", text) if quotes_are_input else text
    return [
        f"{why}: {match.group(0)!r} in {text!r}" for pattern, why in FORBIDDEN for match in pattern.finditer(checked)
    ]


def problem_texts(problem: Mapping[str, Any]) -> Iterator[str]:
    """The words of a problem document a person reads."""
    for key in ("title", "detail"):
        if isinstance(problem.get(key), str):
            yield problem[key]
    for error in problem.get("errors") or []:
        if isinstance(error, Mapping):
            yield from (str(error.get("field", "")), str(error.get("message", "")))


def problem_offences(problem: Mapping[str, Any]) -> list[str]:
    return [found for text in problem_texts(problem) for found in offences(text, quotes_are_input=True)]
