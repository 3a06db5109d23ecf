"""Entity resolution, the decision part: when two records are the same business.

Rules, in order (see docs/registries.md for the measurements behind them):

1. **phone**: the same E.164 phone in the same state, and names at least ``PHONE_NAME_FLOOR`` alike.
   A phone alone is not enough: in the NPPES sample 51 numbers are shared by distinct providers (the
   doctors of one practice, two companies in one building).
2. **name_address**: the same matching key (case, punctuation and legal suffix folded) in the same
   city and state, at a compatible address.
3. **fuzzy_name**: names at least ``NAME_THRESHOLD`` alike (rapidfuzz token-sort ratio of the matching
   keys) in the same city and state, at a compatible address.

A compatible address: either side has no street, or the street keys are equal, or they share the
house number and are close. Two locations of one chain (same name, same city, other street) stay apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapidfuzz import fuzz

from vpx.contacts.normalise import LEGAL_SUFFIXES

# Tuned on the labelled pairs built from the shared samples (bench/registries_matching.py).
NAME_THRESHOLD = 84.0
PHONE_NAME_FLOOR = 60.0
STREET_CLOSE = 85.0


_ABBREVIATIONS = {
    "constr": "construction",
    "const": "construction",
    "svcs": "services",
    "svc": "service",
    "assoc": "associates",
    "assocs": "associates",
    "intl": "international",
    "mgmt": "management",
    "ctr": "center",
    "med": "medical",
    "hlth": "health",
    "dept": "department",
    "natl": "national",
    "bros": "brothers",
    "mfg": "manufacturing",
    "and": "",
    "the": "",
}


def match_name(name_key: str) -> str:
    """A name's matching key reduced further for comparison: "the", "and" and legal forms dropped
    wherever they stand ("MEDFUND LLC THE"), common abbreviations spelled out."""
    out = []
    for word in name_key.split():
        word = _ABBREVIATIONS.get(word, word)
        if word and word not in LEGAL_SUFFIXES:
            out.append(word)
    return " ".join(out) or name_key


@dataclass(frozen=True, slots=True)
class MatchKeys:
    name_key: str  # match_name() of the contact's name_key
    state: str
    city_key: str
    street_key: str | None = None
    phone: str | None = None
    block: str = ""  # block_token() of the stored name_key: what candidates are looked up by


def name_similarity(a: str, b: str) -> float:
    return float(fuzz.token_sort_ratio(a, b))


def house_number(street_key: str) -> str:
    """The first word of a street key when it starts with a digit (``12a`` of ``12a main st``), else ""."""
    head = street_key.split(" ", 1)[0]
    return head if head[:1].isdigit() else ""


def addresses_compatible(a: MatchKeys, b: MatchKeys) -> bool:
    """Either side has no street, or the street keys are equal, or they share the house number and
    are close. (vpx.registries.resolution fetches candidates by this rule: keep the two together.)"""
    if not a.street_key or not b.street_key or a.street_key == b.street_key:
        return True
    number = house_number(a.street_key)
    return (
        bool(number) and number == house_number(b.street_key) and fuzz.ratio(a.street_key, b.street_key) >= STREET_CLOSE
    )


def match_rule(a: MatchKeys, b: MatchKeys, *, threshold: float = NAME_THRESHOLD) -> tuple[str, float] | None:
    """The rule by which ``a`` and ``b`` are one business, with the name score; None when they are not."""
    if a.state != b.state:
        return None
    score = 100.0 if a.name_key == b.name_key else name_similarity(a.name_key, b.name_key)
    if a.phone and a.phone == b.phone and score >= PHONE_NAME_FLOOR:
        return "phone", score
    if a.city_key != b.city_key or not addresses_compatible(a, b):
        return None
    if a.name_key == b.name_key:
        return "name_address", score
    if score >= threshold:
        return "fuzzy_name", score
    return None


_RULE_ORDER = {"name_address": 0, "phone": 1, "fuzzy_name": 2}


def best_match(
    keys: MatchKeys, candidates: list[tuple[int, MatchKeys]], *, threshold: float = NAME_THRESHOLD
) -> tuple[int, str] | None:
    """The candidate ``keys`` is the same business as (id and rule), the surest first; None if none."""
    best: tuple[int, float, int, str] | None = None
    for candidate_id, other in candidates:
        found = match_rule(keys, other, threshold=threshold)
        if found is None:
            continue
        rule, score = found
        rank = (_RULE_ORDER[rule], -score, candidate_id)
        if best is None or rank < (best[0], best[1], best[2]):
            best = (rank[0], rank[1], candidate_id, rule)
    return (best[2], best[3]) if best is not None else None
