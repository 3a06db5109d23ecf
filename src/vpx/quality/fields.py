"""The fields a buyer pays for and can report, how each reads, and the share of a reveal's price a
bad one gives back (the rule is written in docs/decisions.md, "Refunds when data proves wrong")."""

from __future__ import annotations

import hashlib
from decimal import ROUND_DOWN, Decimal
from typing import Any, Literal, get_args

from vpx.money import QUANTUM

ReportedField = Literal["phone", "email", "website", "address"]
Problem = Literal["wrong", "disconnected", "closed_business"]
FIELDS: tuple[str, ...] = get_args(ReportedField)
PROBLEMS: tuple[str, ...] = get_args(Problem)
# The contact columns the fields read (with the contact's id and name), in one place for every query.
COLUMNS = ("phone", "email", "email_status", "website", "street", "city", "state", "postal_code")


def field_values(contact: Any) -> dict[str, str | None]:
    """Each reportable field of a row holding COLUMNS, as text; None where the contact has none. The
    address counts as present when it has a street: city and state are free in every preview."""
    address = None
    if contact.street:
        address = f"{contact.street}, {contact.city}, {contact.state} {contact.postal_code or ''}".strip()
    return {
        "phone": contact.phone or None,
        "email": contact.email or None,
        "website": contact.website or None,
        "address": address,
    }


def value_key(value: str) -> str:
    """A value's digest, as reports and bad marks compare values (case and outer spaces aside)."""
    return hashlib.sha256(value.strip().casefold().encode()).hexdigest()


def field_share(price: Decimal, values: dict[str, str | None]) -> Decimal:
    """One field's share of what a reveal cost: the price split equally over the reportable fields
    the contact has (at least one), rounded down to 1/10,000 credit, so the shares of all of them
    never add up to more than the price."""
    present = sum(1 for value in values.values() if value is not None)
    return (price / max(present, 1)).quantize(QUANTUM, rounding=ROUND_DOWN)
