"""The contact resources of the API: previews, the search envelope, revealed contacts (D13, D14)."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema

from vpx.contacts.search.places import zip_places
from vpx.deliverability.checks import EmailFlag, EmailStatus
from vpx.enrichment.schemas import EnrichmentView
from vpx.fields import JsonInt, SingleLine, StateCode, TrimmedModel, Vertical
from vpx.money import Credits

MAX_OFFSET = 10_000


class ContactPreview(BaseModel):
    id: str = Field(examples=["ct_1042"], description="Contact identifier, `ct_<id>`.")
    business_name: str
    city: str
    state: str = Field(description="Two-letter USPS state code.")
    industry: str = Field(description="One of the 46 verticals.")
    preview: Literal[True] = True
    reveal_cost: Credits = Field(
        description="Credits a reveal of this contact costs now: its intent tier's price for a contact with a "
        "phone, an email, a website and a street address, that price's share for each of them it has otherwise."
    )
    has_phone: bool = Field(description="Whether a reveal includes a phone number.")
    has_email: bool = Field(description="Whether a reveal includes an email address.")
    has_website: bool = Field(description="Whether a reveal includes a website.")
    has_address: bool = Field(description="Whether a reveal includes a street address (city and state are shown here).")
    email_deliverable: bool = Field(
        description="Whether mail to that address can be expected to arrive: its domain has a mail exchanger "
        "and no sequence saw the address bounce for good. False without an email or while it is not checked yet."
    )


class Interpretation(BaseModel):
    """How the search read its question."""

    q: str = Field(description="The words searched for, without a place read from them.")
    city: str | None = Field(
        description="The city searched: the `city` filter, else a place in the words (every city of that name when "
        "no state is given and the catalogue holds it in several states)."
    )
    state: str | None = Field(description="The state searched: the `state` filter, else a place in the words.")
    postal_code: str | None = Field(
        default=None,
        description="The ZIP code the place was read from (`dentist 78701`: the ZIP code's city and state are "
        "searched), else null.",
    )
    dropped: list[str] = Field(
        default_factory=list,
        description="Words of `q` the answer does not require: filler such as `near me` or `best`, and words left out "
        "because no business matches them together with the rest (`total` counts the businesses that match every "
        "other word); empty when every word matched.",
    )


class SearchResult(BaseModel):
    contacts: list[ContactPreview]
    total: int = Field(
        description="All matches, not just this page: the businesses that match every word not in "
        "`interpreted.dropped`, in the place and filters (and, for a place read from the words without 'in', "
        "those whose name holds the words as typed)."
    )
    limit: int
    offset: int
    exact: bool = Field(
        default=True,
        description="Whether the answer holds every change to the catalogue made before the question: always, "
        "unless more than 5,000 changes were waiting to be indexed (a large load written around the service, or "
        "the service catching up after an outage); the service then indexes them at once.",
    )
    interpreted: Interpretation | None = Field(
        default=None,
        description="How the words were read (null without words): a place before or after the words, such as "
        "`dentists in austin tx`, `Charleston SC roofers` or `dentist 78701`, becomes the city and state searched "
        "(a business whose name holds the place's words comes first, wherever it is); the `city` and `state` filters "
        "win over such a place. `dropped` says which words the answer did without.",
        examples=[{"q": "dentists", "city": "Austin", "state": "TX", "postal_code": None, "dropped": []}],
    )


def _zip_code(value: str) -> str:
    if not ZIP_CODE.match(value) or value[:5] not in zip_places():
        raise ValueError(f"{value!r} is not a US ZIP code in use (five digits, or ZIP+4)")
    return value[:5]


ZIP_CODE = re.compile(r"^[0-9]{5}(-[0-9]{4})?$")
ZipCode = Annotated[
    str,
    AfterValidator(_zip_code),
    WithJsonSchema({"type": "string", "pattern": ZIP_CODE.pattern, "description": "A US ZIP code (or ZIP+4)."}),
]


class SearchFilters(TrimmedModel):
    """Filters shared by GET (query string) and POST (body) search."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    state: StateCode | None = None
    city: SingleLine | None = Field(default=None, max_length=120)
    industry: Vertical | None = None
    specialty: SingleLine | None = Field(default=None, max_length=200, description="Words the specialty starts with.")
    license_type: SingleLine | None = Field(default=None, max_length=120)
    email_status: EmailStatus | None = Field(
        default=None,
        description="Only contacts whose email has this status, such as `mx_found` (see `email_status` of a "
        "revealed contact); contacts without an email have none.",
    )
    postal_code: ZipCode | None = Field(
        default=None,
        examples=["78701"],
        description="A US ZIP code in use (ZIP+4 read as its first five digits): its city and state are searched, "
        "as the ZIP code list names them (`interpreted.postal_code` says so when there are words); its state alone "
        "when the catalogue holds no business in its city. The `city` filter wins over it; with a `state` of "
        "another state it matches nothing.",
    )
    exclude_dnc: bool = Field(
        default=False,
        description="Leave out contacts whose phone may not be called for marketing: listed on the national "
        "Do-Not-Call registry, or on a person's own request. A phone not screened against current registry data "
        "yet is kept (the revealed contact's `phone_dnc` says what is known: screen it before calling); contacts "
        "without a phone are kept.",
    )
    limit: JsonInt = Field(default=25, ge=1, le=100, description="Page size, 1–100.")
    offset: JsonInt = Field(default=0, ge=0, le=MAX_OFFSET, description=f"0–{MAX_OFFSET}.")


class SearchBody(SearchFilters):
    """POST /contacts/search: ``query`` (or ``q``) and the same filters as GET."""

    # JSON has types: `false` is not a number and `"5"` is not an integer here.
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, strict=True)

    query: SingleLine | None = Field(default=None, max_length=200, description="Business name, category or keyword.")
    q: SingleLine | None = Field(default=None, max_length=200, description="Synonym of `query`.")


class RevealRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    contact_id: str = Field(max_length=40, examples=["ct_1042"])


class Address(BaseModel):
    street: str | None
    city: str
    state: str
    postal_code: str | None
    country: str


class License(BaseModel):
    type: str | None
    number: str | None
    state: str | None


class SourceRef(BaseModel):
    registry: str
    record_id: str
    file_date: date | None


class PhoneDnc(BaseModel):
    """What the Do-Not-Call data says of the phone shown: check it before calling for marketing."""

    listed: bool | None = Field(
        description="Whether the national Do-Not-Call registry lists the number; null when its area code's "
        "registry data is not held or is older than 31 days (a call may only be screened against a version at "
        "most 31 days old)."
    )
    registry_date: date | None = Field(
        description="The registry version `listed` comes from (when its data was obtained); null with `listed`."
    )
    requested: bool = Field(
        default=False,
        description="The person asked not to be called on this number, whatever the registry says.",
    )


class SuppressionMark(BaseModel):
    reason: Literal["opt_out", "do_not_contact", "fcra", "unsubscribed"] = Field(
        description="Why, as a class: `opt_out` (the person asked), `do_not_contact`, `fcra` (a regulated record), "
        "`unsubscribed` (an unsubscribe from a sequence, where the operator makes those apply to everyone)."
    )
    since: datetime = Field(description="When the contact was put on the list.")


class RevealedContact(BaseModel):
    id: str
    business_name: str
    city: str
    state: str
    industry: str
    preview: Literal[False] = False
    phone: str | None = Field(description="E.164.")
    phone_dnc: PhoneDnc | None = Field(
        default=None,
        description="The phone's do-not-call state: whether the national registry lists it and which version says "
        "so, and whether the person asked not to be called. Null without a phone.",
    )
    email: str | None
    email_status: EmailStatus | None = Field(
        description="What is known of the email's deliverability (null without an email): `unknown` not checked "
        "yet, or its domain's look-up timed out; `valid_syntax` well formed, its domain not looked up yet; "
        "`invalid_syntax` not a well-formed address; `no_mx` its domain takes no mail (no mail exchanger, a null "
        "MX, or no such domain); `mx_found` its domain has a mail exchanger; `bounced` an email to it bounced for "
        "good in a sequence of any account. No mail server is ever contacted to find out."
    )
    email_flags: list[EmailFlag] = Field(
        description="`disposable`: the domain gives out throwaway addresses; `role`: the address names a "
        "function (info@, sales@, support@…), not a person. Empty when neither, or without an email."
    )
    email_checked_at: datetime | None = Field(description="When `email_status` was last worked out; null before.")
    website: str | None
    address: Address
    bad_fields: list[Literal["phone", "email", "website", "address"]] = Field(
        default_factory=list,
        description="Fields whose value was found wrong (buyers' reports, an email that bounced, or the operator): "
        "not shown above, and not charged for in later reveals.",
    )
    suppressed: SuppressionMark | None = Field(
        default=None,
        description="Set when the contact has been put on the suppression list since you revealed it: stop "
        "contacting it and delete it from your systems (also announced by `contact.suppressed`). Null otherwise.",
    )
    specialty: str | None
    license: License
    sources: list[SourceRef]
    revealed_at: datetime
    credits_charged: Credits = Field(
        description="Charged by this request; 0 for a contact already revealed. An idempotent replay "
        "(`Idempotent-Replayed: true`) repeats the first request's figure and charges nothing."
    )
    credits_remaining: Credits


class RevealedContactView(RevealedContact):
    """A revealed contact as ``GET /contacts/{id}`` shows it: the registry's record and, beside it,
    what this account enriched with its own provider keys."""

    enrichment: EnrichmentView | None = Field(
        default=None,
        description="Values this account's enrichment found, each with its provider; null when it enriched nothing. "
        "The registry's own fields above are never overwritten.",
    )
