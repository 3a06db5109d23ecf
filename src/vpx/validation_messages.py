"""A validation error in plain words: the rule a value broke ("must be at most 100", "must be one of:
ro, live, full") and the field it was given for (``contacts[3].phone``), for the API's problems, the
settings' one-line errors, the dashboard's forms and the command line alike.

Nothing here imports the rest of the service: the settings word their own errors with it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

# Parts of a validation error's location that name a type a value was tried as (one member of a
# union: `str`, `list[str]`, `function-after[…]`), not a field a client sent.
_TYPE_PARTS = frozenset({"str", "int", "float", "bool", "decimal", "none", "list", "dict"})


def _is_type_part(part: str) -> bool:
    return part in _TYPE_PARTS or "[" in part or "-" in part


def _field_name(loc: Sequence[Any]) -> str:
    parts = list(loc)
    if parts and parts[0] in ("query", "body", "path", "header", "cookie"):
        parts = parts[1:]
    name = ""
    for part in parts:
        if isinstance(part, int):
            name += f"[{part}]"
        elif not _is_type_part(str(part)):
            name += f".{part}" if name else str(part)
    return name or "body"


def _number(value: Any) -> str:
    """A limit as a person writes it: 0.0001, 100, 1 (never Decimal('0.0001'), 1e-04 or 1.0)."""
    if isinstance(value, str):
        # A constraint behind a validator of the field's own reaches the error as its repr.
        written = re.fullmatch(r"Decimal\('([^']*)'\)", value)
        return _number(Decimal(written.group(1))) if written else value
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") if value.is_finite() else str(value)
    return str(value)


def _choices(expected: Any) -> str:
    """pydantic's "'ro', 'live' or 'full'" as the plain list "ro, live, full"."""
    text = str(expected)
    quoted = re.findall(r"'((?:[^'\\]|\\.)*)'", text)
    return ", ".join(quoted) if quoted else text


def _count(limit: Any, noun: str) -> str:
    return f"{limit} {noun}{'' if limit == 1 else 's'}"


# Messages without a number or a list in them, by pydantic error type.
_PLAIN_MESSAGES = {
    "missing": "is required",
    "extra_forbidden": "is not a known field",
    "string_type": "must be a string",
    "string_unicode": "must be UTF-8 text",
    "string_sub_type": "must be a string",
    "bytes_type": "must be a string",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "int_parsing_size": "is too large",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "decimal_type": "must be a number",
    "decimal_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "set_type": "must be a list",
    "frozen_set_type": "must be a list",
    "iterable_type": "must be a list",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "dataclass_type": "must be an object",
    "none_required": "must be null",
    "date_type": "must be a date (YYYY-MM-DD)",
    "date_parsing": "must be a date (YYYY-MM-DD)",
    "date_from_datetime_parsing": "must be a date (YYYY-MM-DD)",
    "date_from_datetime_inexact": "must be a date (YYYY-MM-DD), without a time",
    "datetime_type": "must be a date and time, e.g. 2026-11-01T00:00:00Z",
    "datetime_parsing": "must be a date and time, e.g. 2026-11-01T00:00:00Z",
    "datetime_from_date_parsing": "must be a date and time, e.g. 2026-11-01T00:00:00Z",
    "datetime_object_invalid": "must be a date and time, e.g. 2026-11-01T00:00:00Z",
    "timezone_aware": "must include a time zone, e.g. Z or +02:00",
    "timezone_naive": "must not include a time zone",
    "time_type": "must be a time of day (HH:MM:SS)",
    "time_parsing": "must be a time of day (HH:MM:SS)",
    "time_delta_type": "must be a duration",
    "time_delta_parsing": "must be a duration",
    "url_type": "must be a URL",
    "url_parsing": "must be a URL",
    "url_syntax_violation": "must be a URL",
    "uuid_type": "must be a UUID",
    "uuid_parsing": "must be a UUID",
    "uuid_version": "must be a UUID",
    "json_invalid": "must be valid JSON",
    "json_type": "must be a JSON string",
    "union_tag_not_found": "is required",
}


def _words_of_pydantic(message: str) -> str:
    """A message of a kind the table does not know, pydantic's phrasing turned into the same plain
    form ("Input should be a valid email" -> "must be a valid email")."""
    message = re.sub(r"^(Value error|Assertion failed), ", "", message)
    message = re.sub(
        r"^(Input|Value|String|List|Dictionary|Decimal input|Tuple|Set|Data) should( not)? ", r"must\2 ", message
    )
    return message


def error_message(item: Mapping[str, Any]) -> str:
    """A validation error's message in plain words, naming the rule the value broke: "must be at most
    100", "must be at least 10 characters", "must be one of: ro, live, full". The field is named beside
    it (``FieldError.field``, and ``field: message`` in a problem's detail)."""
    kind = str(item.get("type", ""))
    context = item.get("ctx") or {}
    if kind in _PLAIN_MESSAGES:
        return _PLAIN_MESSAGES[kind]
    match kind:
        case "greater_than_equal":
            return f"must be at least {_number(context.get('ge'))}"
        case "greater_than":
            return f"must be greater than {_number(context.get('gt'))}"
        case "less_than_equal":
            return f"must be at most {_number(context.get('le'))}"
        case "less_than":
            return f"must be less than {_number(context.get('lt'))}"
        case "multiple_of":
            return f"must be a multiple of {_number(context.get('multiple_of'))}"
        case "string_too_short" | "string_too_long" | "too_short" | "too_long":
            # A text type with a validator of its own (vpx.fields) has its length checked as any
            # value's: say it as for any other string.
            text = kind.startswith("string") or isinstance(item.get("input"), str)
            shortest = kind.endswith("short")
            limit = context.get("min_length" if shortest else "max_length")
            if shortest and limit == 1:
                return "must not be empty"
            noun = "character" if text else "item"
            verb = "be" if text else "have"
            return f"must {verb} {'at least' if shortest else 'at most'} {_count(limit, noun)}"
        case "decimal_max_digits":
            return f"must have at most {_count(context.get('max_digits'), 'digit')}"
        case "decimal_max_places":
            return f"must have at most {_count(context.get('decimal_places'), 'decimal place')}"
        case "decimal_whole_digits":
            return f"must have at most {_count(context.get('whole_digits'), 'digit')} before the decimal point"
        case "enum" | "literal_error":
            return f"must be one of: {_choices(context.get('expected', ''))}"
        case "union_tag_invalid":
            return f"must be one of: {_choices(context.get('expected_tags', ''))}"
        case "string_pattern_mismatch":
            return f"must match the pattern {context.get('pattern')}"
        case "url_scheme":
            return f"must be a URL starting with {_choices(context.get('expected_schemes', ''))}"
    return _words_of_pydantic(str(item.get("msg", "is not valid")))


def _location(item: Mapping[str, Any]) -> tuple[Any, ...]:
    loc = tuple(item.get("loc", ()))
    if item.get("type") in ("union_tag_invalid", "union_tag_not_found"):
        # The tag is a field of the object: name it (`steps[0].type`), not only the object.
        discriminator = str((item.get("ctx") or {}).get("discriminator", "")).strip("'")
        if discriminator.isidentifier():
            loc += (discriminator,)
    return loc


def field_name(item: Mapping[str, Any]) -> str:
    """The field a validation error is about, as a client wrote it: ``limit``, ``contacts[3].phone``,
    ``steps[0].type`` (``body`` for the body as a whole)."""
    return _field_name(_location(item))


def json_syntax_error(document: str | bytes, position: int, error: str) -> str:
    """Where a JSON document stops being JSON, as a person finds it in an editor: line and column."""
    text = document.decode("utf-8", "replace") if isinstance(document, bytes) else document
    before = text[:position]
    line = before.count("\n") + 1
    column = position - (before.rfind("\n") + 1) + 1
    reason = error[:1].lower() + error[1:] if error else "not JSON"
    return f"The request body is not valid JSON: {reason} at line {line}, column {column}."
