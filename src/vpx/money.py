"""Credits are exact decimals (D11). They are stored as integers of 1/10,000 credit."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from typing import Annotated, Any

from pydantic import PlainSerializer, WithJsonSchema
from sqlalchemy import BigInteger
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

UNITS_PER_CREDIT = 10_000
QUANTUM = Decimal(1) / UNITS_PER_CREDIT


def to_units(amount: Decimal) -> int:
    """Credits to storage units; amounts finer than 1/10,000 are rounded half to even."""
    return int((amount * UNITS_PER_CREDIT).quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def from_units(units: int) -> Decimal:
    return (Decimal(units) / UNITS_PER_CREDIT).quantize(QUANTUM)


def quantize(amount: Decimal) -> Decimal:
    return from_units(to_units(amount))


class CreditsType(TypeDecorator[Decimal]):
    """A Decimal column stored as a 64-bit integer of 1/10,000 credit, exact on every database."""

    impl = BigInteger
    cache_ok = True

    def process_bind_param(self, value: Decimal | int | None, dialect: Dialect) -> int | None:
        if value is None:
            return None
        return to_units(Decimal(value))

    def process_result_value(self, value: Any, dialect: Dialect) -> Decimal | None:
        if value is None:
            return None
        return from_units(int(value))


def _credits_json(value: Decimal) -> int | float:
    # JSON numbers; integral amounts print as integers ("25", not "25.0").
    if value == value.to_integral_value():
        return int(value)
    return float(value)


Credits = Annotated[
    Decimal,
    PlainSerializer(_credits_json, return_type=int | float, when_used="json"),
    WithJsonSchema({"type": "number", "description": "Credits, exact to 1/10,000."}, mode="serialization"),
]


def credits_header(value: Decimal) -> str:
    """The text form used in X-Credits-* headers."""
    return format(value.normalize(), "f")
