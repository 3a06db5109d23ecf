"""What a reveal sells and what it costs (D9, docs/decisions.md "What a reveal costs").

A reveal sells the contact's phone, email, website and street address: those of them it has, less the
values found bad (vpx.quality), which are neither shown nor charged for. Its intent tier (D9) sets
the price of a contact with all four; one with fewer costs that price's share for the fields it has,
so a buyer never pays for a field that is missing or known to be wrong.
"""

from __future__ import annotations

from decimal import ROUND_DOWN, Decimal
from typing import Any

from vpx.config import Settings
from vpx.money import QUANTUM

# The fields a reveal sells, as bits: kept in reveals.fields_sold and contacts.bad_fields.
FIELD_BITS: dict[str, int] = {"phone": 1, "email": 2, "website": 4, "address": 8}
ALL_FIELDS = 15
FIELD_COUNT = len(FIELD_BITS)


def fields_present(row: Any) -> int:
    """The bits of the fields the contact has (a row with phone, email, website and street): the
    address counts when it has a street, since city and state are free in every preview."""
    return (
        (FIELD_BITS["phone"] if row.phone else 0)
        | (FIELD_BITS["email"] if row.email else 0)
        | (FIELD_BITS["website"] if row.website else 0)
        | (FIELD_BITS["address"] if row.street else 0)
    )


def fields_for_sale(row: Any) -> int:
    """The fields a reveal of the contact sells now: those it has, less the values found bad."""
    return fields_present(row) & ~int(row.bad_fields or 0)


def field_names(bits: int) -> list[str]:
    return [name for name, bit in FIELD_BITS.items() if bits & bit]


def count(bits: int) -> int:
    return (bits & ALL_FIELDS).bit_count()


def tier_price(intent_level: str | None, settings: Settings) -> Decimal:
    """D9: 1 credit, unless the contact has a live signal; then its highest intent tier sets the price
    (for a contact with all four fields)."""
    if intent_level == "hot":
        return settings.price_hot
    if intent_level == "warm":
        return settings.price_warm
    if intent_level == "cold":
        return settings.price_cold
    return settings.price_default


def price_of(intent_level: str | None, fields: int, settings: Settings) -> Decimal:
    """The tier's price times the share of the four fields sold, rounded down to 1/10,000 credit."""
    sold = count(fields)
    if sold == FIELD_COUNT:
        return tier_price(intent_level, settings)
    return (tier_price(intent_level, settings) * sold / FIELD_COUNT).quantize(QUANTUM, rounding=ROUND_DOWN)


def reveal_price(row: Any, settings: Settings) -> Decimal:
    """What a reveal of the contact costs now (a row with intent_level, the four fields and
    bad_fields)."""
    return price_of(row.intent_level, fields_for_sale(row), settings)
