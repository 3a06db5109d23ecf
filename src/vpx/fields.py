"""Field types shared by request schemas: a state code and a vertical, documented as enumerations
so the OpenAPI document says exactly what is accepted, and the two kinds of free text a client sends."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, StringConstraints, WithJsonSchema

from vpx.geography import STATE_CODES, normalise_state
from vpx.verticals import VERTICALS, is_vertical

_STATE_VALUES = sorted(STATE_CODES) + sorted(code.lower() for code in STATE_CODES)


def _state(value: str) -> str:
    code = normalise_state(value) if value == value.strip() else None
    if code is None or value not in _STATE_VALUES:
        raise ValueError(f"{value!r} is not a two-letter US state code")
    return code


def _vertical(value: str) -> str:
    if not is_vertical(value):
        raise ValueError(f"{value!r} is not one of the 46 verticals")
    return value


StateCode = Annotated[
    str,
    AfterValidator(_state),
    WithJsonSchema({"type": "string", "enum": _STATE_VALUES, "description": "Two-letter USPS code (either case)."}),
]
Vertical = Annotated[
    str,
    AfterValidator(_vertical),
    WithJsonSchema({"type": "string", "enum": list(VERTICALS), "description": "One of the 46 verticals (D18)."}),
]


def json_integer(value: object) -> object:
    # JSON Schema counts 25.0 as an integer; booleans are not numbers.
    if isinstance(value, bool):
        raise ValueError("must be an integer, not a boolean")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


JsonInt = Annotated[int, BeforeValidator(json_integer)]


RFC_3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _timestamp(value: object) -> object:
    # Exactly RFC 3339 (the document's date-time): no bare dates, no epoch numbers, a zone always.
    if not isinstance(value, str) or not RFC_3339.match(value):
        raise ValueError("must be an RFC 3339 timestamp with a zone, e.g. 2026-11-01T00:00:00Z")
    return datetime.fromisoformat(value.replace("z", "Z").replace("t", "T"))


Timestamp = Annotated[datetime, BeforeValidator(_timestamp)]


# Free text (names, descriptions, notes, titles, templates, search words) never carries C0 control
# characters (U+0000-U+001F) or DEL (U+007F): they cannot be shown, PostgreSQL refuses NUL in text,
# and a newline in a name or an email subject is an injection. Single-line text also refuses the line
# breaks beyond ASCII: U+0085 (next line), U+2028 and U+2029 (line and paragraph separators) end a
# line for email headers and many readers, as a newline does. Multi-line fields (email bodies, notes,
# postal addresses) keep newline, tab and those. The raw value is checked, before any trimming of
# spaces, so the pattern in the OpenAPI document is exactly the rule applied.
CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")
CONTROL_CHARACTERS_BUT_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
SINGLE_LINE_PATTERN = "^[^\\u0000-\\u001F\\u007F\\u0085\\u2028\\u2029]*$"
MULTI_LINE_PATTERN = "^[^\\u0000-\\u0008\\u000B-\\u001F\\u007F]*$"
SINGLE_LINE_MESSAGE = "must not contain control characters"
MULTI_LINE_MESSAGE = "must not contain control characters other than newline and tab"


def _single_line(value: object) -> object:
    if isinstance(value, str) and CONTROL_CHARACTERS.search(value):
        raise ValueError(SINGLE_LINE_MESSAGE)
    return value


def _multi_line(value: object) -> object:
    if isinstance(value, str) and CONTROL_CHARACTERS_BUT_LINES.search(value):
        raise ValueError(MULTI_LINE_MESSAGE)
    return value


# Lengths are given where the type is used: `name: SingleLine = Field(max_length=200)`.
SingleLine = Annotated[str, StringConstraints(pattern=SINGLE_LINE_PATTERN), BeforeValidator(_single_line)]
MultiLine = Annotated[str, StringConstraints(pattern=MULTI_LINE_PATTERN), BeforeValidator(_multi_line)]
