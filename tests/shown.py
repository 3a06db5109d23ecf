"""What the README and the docs show of an answer, read as a pattern the real answer must match.

An answer is shown as JSON with elisions, the way a reader writes one by hand:

- ``…`` as a value: any value; as an object member: other members may be there (an object shown
  without one must have exactly the members shown); as an array item: any number of items there (an
  array shown without one must have exactly the items shown, in order; ``[{…}, …]`` is "first this,
  then any number", ``[…, {…}, …]`` "this one, somewhere").
- ``…`` inside a string: any text there (``"vpx_live_…"``, ``"+1407555…"``); a string shown whole must
  be equal. After a number's digits (``12…``): a number whose digits begin so.
- ``"a"|"b"`` or ``3|6``: either value.
- a member written without a value (``{"id", "status":"ok"}``): it is there, whatever its value;
  ``"company"?`` (a member with a question mark): it may be there.
- numbers are compared as numbers (``1`` is ``1.0``); ``true``, ``false`` and ``null`` as themselves.

Text after the value (``{…}   (a warm signal)``) is the writer's comment and is not compared. Plain
lines (a header, a line of a stream, what a program printed) are compared as text, ``…`` standing for
any text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

ELLIPSIS = "…"
_scanstring: Any = getattr(json.decoder, "scanstring")  # json's own reader of a string's rest  # noqa: B009


@dataclass(frozen=True)
class AnyValue:
    pass


@dataclass(frozen=True)
class Text:
    """A string, ``…`` standing for any text."""

    shown: str

    def matches(self, value: str) -> bool:
        return glob(self.shown, value)


@dataclass(frozen=True)
class Digits:
    """A number shown in part (``12…``): its digits as written, ``…`` standing for any."""

    shown: str


@dataclass(frozen=True)
class Scalar:
    value: Any


@dataclass(frozen=True)
class Either:
    options: tuple[Any, ...]


@dataclass(frozen=True)
class Member:
    pattern: Any  # None: present, whatever its value
    optional: bool = False


@dataclass(frozen=True)
class Obj:
    members: dict[str, Member]
    open: bool


@dataclass(frozen=True)
class Arr:
    items: tuple[Any, ...]  # patterns, and ELLIPSIS where any number of items may be


class ShownError(ValueError):
    """What is shown does not read as an answer."""


def glob(shown: str, text: str) -> bool:
    """Whether ``text`` is ``shown`` with each ``…`` standing for any text."""
    pattern = ".*".join(re.escape(part) for part in shown.split(ELLIPSIS))
    return re.fullmatch(pattern, text, flags=re.DOTALL) is not None


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def space(self) -> None:
        while self.at < len(self.text) and self.text[self.at] in " \t\r\n":
            self.at += 1

    def peek(self) -> str:
        self.space()
        return self.text[self.at : self.at + 1]

    def take(self, expected: str) -> None:
        if self.peek() != expected:
            raise ShownError(f"expected {expected!r} at {self.at}: {self.text[self.at : self.at + 40]!r}")
        self.at += 1

    def value(self) -> Any:
        first = self.scalar_or_structure()
        options = [first]
        while self.peek() == "|":
            self.at += 1
            options.append(self.scalar_or_structure())
        return first if len(options) == 1 else Either(tuple(options))

    def scalar_or_structure(self) -> Any:
        char = self.peek()
        if char == "{":
            return self.object()
        if char == "[":
            return self.array()
        if char == '"':
            return Text(self.string())
        if char == ELLIPSIS:
            self.at += 1
            return AnyValue()
        found = re.compile(r"-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null").match(self.text, self.at)
        if found is None:
            raise ShownError(f"no value at {self.at}: {self.text[self.at : self.at + 40]!r}")
        self.at = found.end()
        word = found.group(0)
        if self.text[self.at : self.at + 1] == ELLIPSIS:  # 12…: a number that begins so
            self.at += 1
            return Digits(word + ELLIPSIS)
        words: dict[str, Any] = {"true": True, "false": False, "null": None}
        return Scalar(words[word] if word in words else Decimal(word))

    def string(self) -> str:
        self.take('"')
        try:
            text, self.at = _scanstring(self.text, self.at)
        except json.JSONDecodeError as exc:
            raise ShownError(f"a string that does not end at {self.at}: {exc}") from None
        return str(text)

    def object(self) -> Obj:
        self.take("{")
        members: dict[str, Member] = {}
        is_open = False
        while self.peek() != "}":
            if self.peek() == ELLIPSIS:
                self.at += 1
                is_open = True
            else:
                key = self.string()
                optional = self.peek() == "?"
                if optional:
                    self.at += 1
                pattern = None
                if self.peek() == ":":
                    self.at += 1
                    pattern = self.value()
                members[key] = Member(pattern, optional)
            if self.peek() == ",":
                self.at += 1
            elif self.peek() != "}":
                raise ShownError(f"expected ',' or '}}' at {self.at}: {self.text[self.at : self.at + 40]!r}")
        self.at += 1
        return Obj(members, is_open)

    def array(self) -> Arr:
        self.take("[")
        items: list[Any] = []
        while self.peek() != "]":
            if self.peek() == ELLIPSIS and self.text[self.at + 1 : self.at + 2].strip() in (",", "]", ""):
                self.at += 1
                items.append(ELLIPSIS)
            else:
                items.append(self.value())
            if self.peek() == ",":
                self.at += 1
            elif self.peek() != "]":
                raise ShownError(f"expected ',' or ']' at {self.at}: {self.text[self.at : self.at + 40]!r}")
        self.at += 1
        return Arr(tuple(items))


def parse(shown: str) -> tuple[Any, str]:
    """The pattern of the JSON value ``shown`` begins with, and the text after it (a comment)."""
    reader = _Reader(shown)
    pattern = reader.value()
    return pattern, shown[reader.at :].strip()


def mismatches(pattern: Any, value: Any, where: str = "$") -> list[str]:
    """Where ``value`` differs from what ``pattern`` shows; empty when it matches."""
    if isinstance(pattern, AnyValue):
        return []
    if isinstance(pattern, Either):
        if any(not mismatches(option, value, where) for option in pattern.options):
            return []
        return [f"{where}: {value!r} is none of the values shown"]
    if isinstance(pattern, Text):
        if isinstance(value, str) and pattern.matches(value):
            return []
        return [f"{where}: {value!r} is not {pattern.shown!r}"]
    if isinstance(pattern, Digits):
        if isinstance(value, int | float) and not isinstance(value, bool) and glob(pattern.shown, str(value)):
            return []
        return [f"{where}: {value!r} is not {pattern.shown}"]
    if isinstance(pattern, Scalar):
        shown = pattern.value
        if isinstance(shown, Decimal):
            if isinstance(value, int | float) and not isinstance(value, bool) and Decimal(str(value)) == shown:
                return []
        elif value is shown or (value == shown and type(value) is type(shown)):
            return []
        return [f"{where}: {value!r} is not {shown}"]
    if isinstance(pattern, Obj):
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__} where an object is shown"]
        found: list[str] = []
        for key, member in pattern.members.items():
            if key not in value:
                if not member.optional:
                    found.append(f"{where}.{key}: missing")
            elif member.pattern is not None:
                found += mismatches(member.pattern, value[key], f"{where}.{key}")
        if not pattern.open:
            extra = sorted(set(value) - set(pattern.members))
            if extra:
                found.append(f"{where}: members the answer has but the text does not show (add them or …): {extra}")
        return found
    if isinstance(pattern, Arr):
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__} where an array is shown"]
        if _items_match(pattern.items, value, where):
            return []
        if len(pattern.items) == len(value) and ELLIPSIS not in pattern.items:  # say which item differs
            pairs = enumerate(zip(pattern.items, value, strict=True))
            return [m for i, (p, v) in pairs for m in mismatches(p, v, f"{where}[{i}]")]
        return [f"{where}: the {len(value)} items answered do not follow the items shown"]
    raise TypeError(pattern)


def _items_match(items: tuple[Any, ...], values: list[Any], where: str) -> bool:
    if not items:
        return not values
    head, rest = items[0], items[1:]
    if head == ELLIPSIS:
        return any(_items_match(rest, values[skip:], where) for skip in range(len(values) + 1))
    return bool(values) and not mismatches(head, values[0], where) and _items_match(rest, values[1:], where)


def compare(shown: str, value: Any) -> list[str]:
    """Parses ``shown`` and returns where ``value`` differs from it."""
    pattern, _ = parse(shown)
    return mismatches(pattern, value)


_HEADER = re.compile(r"^([A-Z][A-Za-z]*(?:-[A-Za-z]+)+): (.*)$")
_STATUS = re.compile(r"^(\d{3})(?:\s+|$)")
_STREAM = re.compile(r"^(:|id:|event:|data:|retry:)")


def answer_problems(shown: list[str], status: int, headers: dict[str, str], body: str) -> list[str]:
    """Where an HTTP answer differs from the lines a document shows of it (its "# " prefixes gone):
    headers (``X-Credits-Charged: 1``), a status before the body (``202 {…}``), a stream's first lines
    (``id: 1201``, ``data: {…}``), or the JSON body."""
    problems: list[str] = []
    rest: list[str] = []
    for line in shown:
        header = _HEADER.match(line)
        if header and not rest:
            value = headers.get(header.group(1).lower())
            if value is None or not glob(header.group(2).strip(), value):
                problems.append(f"header {header.group(1)}: {value!r} is not {header.group(2)!r}")
        else:
            rest.append(line)
    if "text/event-stream" in headers.get("content-type", ""):
        lines = body.split("\n")
        merged: list[str] = []
        for line in rest:  # a long data: line is shown on several
            if merged and line.strip() and not is_stream_line(line):
                merged[-1] += " " + line.strip()
            else:
                merged.append(line)
        rest = merged
        for index, line in enumerate(rest):
            got = lines[index] if index < len(lines) else None
            if got is None:
                problems.append(f"the stream ended before line {index + 1}: {line!r}")
            elif line.startswith("data: ") and got.startswith("data: "):
                problems += [f"data: {problem}" for problem in compare(line[6:], json.loads(got[6:]))]
            elif not glob(line.strip(), got.strip()):
                problems.append(f"stream line {index + 1}: {got!r} is not {line!r}")
        return problems
    text = "\n".join(rest).strip()
    if not text:
        return problems
    code = _STATUS.match(text)
    if code:
        if int(code.group(1)) != status:
            problems.append(f"status {status} is not {code.group(1)}")
        text = text[code.end() :]
        if not text.strip():
            return problems
    try:
        answer = json.loads(body) if body.strip() else None
    except ValueError:
        return [*problems, f"the answer is not JSON: {body[:200]!r}"]
    return problems + compare(text, answer)


def is_stream_line(text: str) -> bool:
    return _STREAM.match(text) is not None or text == ""
