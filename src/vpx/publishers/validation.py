"""One contributed row, checked field by field (D17): every problem of a row is reported, none stops
the other rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vpx.contacts.normalise import clean_display, email_key, name_key, phone_e164, words
from vpx.errors import FieldError
from vpx.fields import CONTROL_CHARACTERS, SINGLE_LINE_MESSAGE
from vpx.geography import normalise_state
from vpx.verticals import is_vertical

REQUIRED = ("business_name", "phone", "city", "state", "industry")
# Optional fields and their longest accepted length.
OPTIONAL = {"email": 320, "website": 300, "street": 300, "postal_code": 10, "specialty": 200}
LONGEST = {"business_name": 300, "city": 120, "phone": 40, "state": 40, "industry": 60}


@dataclass
class CheckedRow:
    fields: dict[str, Any] = field(default_factory=dict)
    errors: list[FieldError] = field(default_factory=list)

    @property
    def phone_key(self) -> str:
        return str(self.fields["phone"])

    @property
    def business_key(self) -> tuple[str, str, str]:
        return (name_key(self.fields["business_name"]), self.fields["state"], " ".join(words(self.fields["city"])))


def check_row(index: int, raw: Any) -> CheckedRow:
    row = CheckedRow()
    where = f"contacts[{index}]"

    def error(name: str, message: str) -> None:
        row.errors.append(FieldError(field=f"{where}.{name}" if name else where, message=message))

    if not isinstance(raw, dict):
        error("", "must be an object")
        return row
    for name in sorted(set(raw) - set(REQUIRED) - set(OPTIONAL)):
        error(str(name)[:60], "is not a contributed-contact field")
    texts: dict[str, str] = {}
    for name in (*REQUIRED, *OPTIONAL):
        value = raw.get(name)
        if value is None:
            if name in REQUIRED:
                error(name, "is required")
            continue
        if not isinstance(value, str):
            error(name, "must be a string")
            continue
        if CONTROL_CHARACTERS.search(value):
            error(name, SINGLE_LINE_MESSAGE)
            continue
        value = clean_display(value)
        limit = LONGEST.get(name) or OPTIONAL[name]
        if len(value) > limit:
            error(name, f"must be at most {limit} characters")
        elif not value and name in REQUIRED:
            error(name, "must not be empty")
        elif value:
            texts[name] = value
    if "business_name" in texts and not name_key(texts["business_name"]):
        error("business_name", "must contain letters or digits")
    if "phone" in texts:
        phone = phone_e164(texts["phone"]) if texts["phone"].startswith("+") else None
        if phone is None:
            error("phone", "must be a valid phone number in international format with a leading +")
        else:
            texts["phone"] = phone
    if "state" in texts:
        code = normalise_state(texts["state"])
        if code is None:
            error("state", f"{texts['state']!r} is not a two-letter US state code")
        else:
            texts["state"] = code
    if "industry" in texts and not is_vertical(texts["industry"]):
        error("industry", f"{texts['industry']!r} is not one of the 46 verticals")
    if "city" in texts and not words(texts["city"]):
        error("city", "must contain letters or digits")
    if "email" in texts:
        email = email_key(texts["email"])
        if email is None or " " in email:
            error("email", "is not an email address")
        else:
            texts["email"] = email
    if not row.errors:
        row.fields = texts
    return row
