"""The terms a contact is found by: every word of its searchable fields, marked with the field it is
in, and its filter values. The postings (vpx.contacts.search.postings) keep, for each term, the ids of
the active contacts that have it.

    n:plumbing   a word of the business name
    s:plumbing   a word of the specialty
    l:plumbing   a word of the licence type
    o:austin     a word of the industry or the city (found, but not what the contact is about)
    #st:ca       the state; #in:home-services the industry; #ct:sanfrancisco the city
    #em:mx_found the email's deliverability status (vpx.deliverability), for a contact with an email
    #other       a business of another kind than the trade its specialty names (OTHER_KINDS: a supplier,
                 a utility, software, staffing), ranked after the trade's own businesses
    #dnc         a phone that may not be called: the Do-Not-Call registry lists it, or its person asked
                 (contacts.phone_dnc listed or requested: the search filter exclude_dnc leaves them out)
    #a           every active contact

Words are cut as ``vpx.contacts.normalise.words`` cuts them (accents folded, anything that is not a
letter or digit separates words), the same for a contact and for a question.
"""

from __future__ import annotations

from functools import lru_cache

from vpx.contacts.normalise import words

NAME, SPECIALTY, LICENSE, OTHER = "n:", "s:", "l:", "o:"
TEXT_FIELDS = (NAME, SPECIALTY, LICENSE, OTHER)
# Where a trade shows itself: its name, its specialty, its licence (the second tier of relevance).
TRADE_FIELDS = (NAME, SPECIALTY, LICENSE)
EVERY_CONTACT = "#a"
# Specialty words that make a business another kind than the trade it names: "Electrical Supplies"
# (a wholesaler) and "Electric Utility" are not electricians, "Accounting Software" is no accountant.
OTHER_KINDS = frozenset(
    {"supply", "supplies", "supplier", "wholesale", "utility", "utilities", "software", "staffing", "distribution"}
)
# The contacts whose specialty holds one of them: one term read by every question with words (its
# ranking demotes them), where the nine words' own terms cost a first answer nine bitmaps.
OTHER_KIND = "#other"
DO_NOT_CALL = "#dnc"
# The phone_dnc values (vpx.compliance.dnc) that make a contact's phone one not to call.
DO_NOT_CALL_STATES = frozenset({"listed", "requested"})
# Longer words are not indexed: nobody types them, and a term must fit its column.
LONGEST_WORD = 64


def state_term(state: str) -> str:
    return "#st:" + state.lower()


def industry_term(industry: str) -> str:
    return "#in:" + industry


def city_term(city: str) -> str:
    return "#ct:" + "".join(words(city))


def email_term(status: str) -> str:
    return "#em:" + status


@lru_cache(maxsize=1 << 16)
def field_words(prefix: str, text: str | None) -> frozenset[str]:
    """The terms of one field's text (specialties, licence types and cities repeat endlessly)."""
    if not text:
        return frozenset()
    return frozenset(prefix + word for word in words(text) if len(word) <= LONGEST_WORD)


def contact_terms(
    *,
    business_name: str,
    specialty: str | None,
    license_type: str | None,
    industry: str,
    city: str,
    state: str,
    email_status: str | None = None,
    phone_dnc: str | None = None,
) -> frozenset[str]:
    """Every term an active contact is found by. ``email_status``: its email's, None without an email;
    ``phone_dnc``: its phone's Do-Not-Call state, None without a phone."""
    terms = (
        field_words(NAME, business_name)
        | _specialty(specialty)
        | field_words(LICENSE, license_type)
        | _other(industry, city, state)
    )
    return terms | filter_terms(email_status, phone_dnc)


def filter_terms(email_status: str | None, phone_dnc: str | None) -> frozenset[str]:
    """The terms of a contact's email status and phone's Do-Not-Call state."""
    found = {email_term(email_status)} if email_status else set()
    if phone_dnc in DO_NOT_CALL_STATES:
        found.add(DO_NOT_CALL)
    return frozenset(found)


@lru_cache(maxsize=1 << 16)
def _specialty(specialty: str | None) -> frozenset[str]:
    found = field_words(SPECIALTY, specialty)
    if any(term[2:] in OTHER_KINDS for term in found):
        return found | {OTHER_KIND}
    return found


@lru_cache(maxsize=1 << 16)
def _other(industry: str, city: str, state: str) -> frozenset[str]:
    return (
        field_words(OTHER, industry)
        | field_words(OTHER, city)
        | {EVERY_CONTACT, state_term(state), industry_term(industry), city_term(city)}
    )


def searched_word(term: str) -> str | None:
    """The word of a text term (``n:plumbing`` → plumbing), None for a filter term."""
    return term[2:] if term[:2] in TEXT_FIELDS else None
