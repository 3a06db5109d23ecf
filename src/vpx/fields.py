"""Field types shared by request schemas: a state code and a vertical, documented as enumerations
so the OpenAPI document says exactly what is accepted."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, WithJsonSchema

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
