"""What an email template may name, with an example value of each (checks render with these), the
values of one email's variables, and the error a template that cannot be used raises."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# What templates may name, with an example value of each (validation renders with these).
VARIABLES: dict[str, dict[str, str]] = {
    "contact": {
        "business_name": "Acme Plumbing LLC",
        "city": "Denver",
        "state": "CO",
        "industry": "home-services",
        "specialty": "Plumbing",
        "website": "https://acmeplumbing.example",
        "phone": "+13035550100",
        "email": "info@acmeplumbing.example",
    },
    "decision_maker": {"name": "Maria Lopez", "first_name": "Maria", "last_name": "Lopez", "title": "Owner"},
    "mailbox": {"from_name": "Sam Seller", "email": "sam@seller.example"},
}


class TemplateInvalid(ValueError):
    """A template that cannot be used: its text says why (the first problem found); ``index`` is
    the template's place among those ``check_async`` was given."""

    def __init__(self, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


@dataclass(frozen=True)
class Context:
    """The values of one email's template variables."""

    contact: dict[str, str]
    decision_maker: dict[str, str]
    mailbox: dict[str, str]

    def as_dict(self) -> dict[str, Any]:
        return {"contact": self.contact, "decision_maker": self.decision_maker, "mailbox": self.mailbox}
