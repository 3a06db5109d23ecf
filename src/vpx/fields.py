"""Field types shared by request schemas: a state code and a vertical, documented as enumerations
so the OpenAPI document says exactly what is accepted, and the two kinds of free text a client sends."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from functools import cache
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from annotated_types import MaxLen
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    StringConstraints,
    ValidationError,
    WithJsonSchema,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import InitErrorDetails

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
    WithJsonSchema({"type": "string", "enum": list(VERTICALS), "description": "One of the 46 verticals."}),
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


# Request models that trim the spaces around text (``str_strip_whitespace``) check the document's
# maxLength against the value as sent, spaces included: pydantic checks it after trimming, so a value
# over the documented length would be accepted. Within the length, the spaces are still trimmed.


def _string_limit(metadata: Iterable[Any]) -> int | None:
    limits = [m.max_length for m in metadata if isinstance(m, MaxLen | StringConstraints) and m.max_length is not None]
    return min(limits) if limits else None


def _unwrap(annotation: Any, metadata: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]]:
    """The annotation without Annotated, and every constraint found on the way (a FieldInfo's too)."""
    while get_origin(annotation) is Annotated:
        annotation, *extra = get_args(annotation)
        for item in extra:
            metadata += tuple(item.metadata) if isinstance(item, FieldInfo) else (item,)
    return annotation, metadata


def _too_long(
    value: object, annotation: Any, metadata: tuple[Any, ...], loc: tuple[str | int, ...]
) -> Iterator[InitErrorDetails]:
    annotation, metadata = _unwrap(annotation, metadata)
    origin = get_origin(annotation)
    if origin in (Union, UnionType):
        for option in get_args(annotation):
            if option is not type(None):
                yield from _too_long(value, option, metadata, loc)
        return
    if annotation is str and isinstance(value, str):
        limit = _string_limit(metadata)
        if limit is not None and len(value) > limit:
            yield InitErrorDetails(type="string_too_long", loc=loc, input=value, ctx={"max_length": limit})
    elif origin in (list, tuple, set, frozenset) and isinstance(value, list | tuple):
        # The constraints given so far are the list's own (its number of items): not passed down.
        item_type = (get_args(annotation) or (Any,))[0]
        for index, item in enumerate(value):
            yield from _too_long(item, item_type, (), (*loc, index))


def _limits_text(annotation: Any, metadata: tuple[Any, ...]) -> bool:
    """Whether a maxLength applies to some text of the annotation (itself, or its items)."""
    annotation, metadata = _unwrap(annotation, metadata)
    origin = get_origin(annotation)
    if origin in (Union, UnionType):
        return any(_limits_text(option, metadata) for option in get_args(annotation))
    if annotation is str:
        return _string_limit(metadata) is not None
    if origin in (list, tuple, set, frozenset):
        return any(_limits_text(item, ()) for item in get_args(annotation))
    return False


@cache
def _checked_fields(model: type[BaseModel]) -> tuple[tuple[str, str | None, Any, tuple[Any, ...]], ...]:
    return tuple(
        (name, field.alias, field.annotation, tuple(field.metadata))
        for name, field in model.model_fields.items()
        if _limits_text(field.annotation, tuple(field.metadata))
    )


class TrimmedModel(BaseModel):
    """The base of request models that trim the spaces around text: maxLength holds as sent."""

    model_config = ConfigDict(str_strip_whitespace=True)

    @model_validator(mode="before")
    @classmethod
    def _lengths_as_sent(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        errors: list[InitErrorDetails] = []
        for name, alias, annotation, metadata in _checked_fields(cls):
            key = alias if alias is not None and alias in data else name
            if key in data:
                errors += _too_long(data[key], annotation, metadata, (key,))
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        return data
