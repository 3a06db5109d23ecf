"""What a search is asked (``SearchQuery``), how it was read (``Interpreted``) and what it answers
(``SearchPage``), and the connection it reads through."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from vpx.models import Contact

# Searches read through an ORM session or a bare connection (the API's search uses the latter: it
# has nothing to load into a session).
Reader = AsyncSession | AsyncConnection


@dataclass(frozen=True)
class SearchQuery:
    text: str | None = None
    state: str | None = None
    city: str | None = None
    industry: str | None = None
    specialty: str | None = None
    license_type: str | None = None
    limit: int = 25
    offset: int = 0
    # The email's deliverability status (vpx.deliverability.checks.STATUSES); contacts with an email only.
    email_status: str | None = None
    # A ZIP code: its city and state (as the ZIP code list names them, spelt as the catalogue does),
    # unless ``city`` is given; its state when the catalogue holds no contact in its city.
    postal_code: str | None = None
    # Leave out contacts whose phone may not be called (the Do-Not-Call registry lists it, or its
    # person asked: terms.DO_NOT_CALL); a phone not screened yet ("unknown") is kept.
    exclude_dnc: bool = False
    # Set by ``interpret``: the question's words as typed when its place was read without "in" or
    # "near" (they may be a business's name: "Boston Dental"), and the place's own words.
    as_typed: str | None = None
    place_words: tuple[str, ...] = ()

    def count_key(self) -> tuple[Any, ...]:
        return (
            self.text,
            self.state,
            self.city,
            self.industry,
            self.specialty,
            self.license_type,
            self.email_status,
            self.as_typed,
            self.postal_code,
            self.exclude_dnc,
        )


@dataclass(frozen=True)
class Interpreted:
    """How a question was read: its words, the city and state searched (from the filters, or from a
    place in the words), the ZIP code a place was read from, and the words the answer left out."""

    q: str
    city: str | None
    state: str | None
    postal_code: str | None = None
    dropped: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "q": self.q,
            "city": self.city,
            "state": self.state,
            "postal_code": self.postal_code,
            "dropped": list(self.dropped),
        }


@dataclass
class SearchPage:
    rows: list[Any]
    total: int
    interpreted: Interpreted | None = None
    # False only when more changes wait to be folded in than a search applies (vpx.contacts.search.
    # postings.PENDING_APPLIED): the answer is then the postings' with the first of them applied.
    exact: bool = True


PREVIEW_COLUMNS = (
    Contact.id,
    Contact.business_name,
    Contact.city,
    Contact.state,
    Contact.industry,
    Contact.intent_level,
    Contact.email,
    Contact.email_status,
    Contact.phone,
    Contact.website,
    Contact.street,
    Contact.bad_fields,
)
