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
A toll-free number (a chain's or a franchise's central line) is not evidence of one location: the
phone rule leaves it aside.

**Vetoes.** Whatever the rule and the name similarity, conflicting strong evidence keeps two records
apart: two different phones (unless one record lists both), different registrable website domains,
different house numbers on the same street, different licence numbers of one licence scheme and
state, different NPIs, EINs or CIKs (``vpx.contacts.identifiers``). For a data vendor a false merge is
worse than a missed one: signals, purchases and revenue share would go to the wrong business. When a
rule would have joined them and their names are nearly equal (at least ``NAME_THRESHOLD``), the pair
is a *possible duplicate* for an operator to merge or dismiss (``vpx registries duplicates``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz

from vpx.contacts.identifiers import NOT_EVIDENCE, kind_of, other_names, registrable_domain
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
    website: str | None = None  # the registrable domain of the website (identifiers.registrable_domain)
    identifiers: frozenset[str] = frozenset()  # strong identifiers beyond phone and website (identifiers.py)


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


# US toll-free area codes: numbers that chains and franchises share across locations.
TOLL_FREE = ("+1800", "+1833", "+1844", "+1855", "+1866", "+1877", "+1888")
VETO_REASONS = {"tel": "phone", "web": "website", "npi": "npi", "ein": "ein", "cik": "cik"}


@lru_cache(maxsize=1 << 12)
def strong_evidence(phone: str | None, website: str | None, identifiers: frozenset[str]) -> dict[str, frozenset[str]]:
    """A record's strong identifiers by kind: its phones, registrable domains, licences, NPI, EIN, CIK."""
    by_kind: dict[str, set[str]] = {}
    if phone:
        by_kind.setdefault("tel", set()).add(phone)
    if website:
        by_kind.setdefault("web", set()).add(website)
    for token in identifiers:
        kind = kind_of(token)
        if kind in NOT_EVIDENCE:
            continue
        value = token[len(kind) + 1 :]
        if kind == "web":
            value = registrable_domain(value) or value
        by_kind.setdefault(kind, set()).add(value)
    return {kind: frozenset(values) for kind, values in by_kind.items()}


def _street_without_number(street_key: str) -> str:
    return street_key.split(" ", 1)[1] if " " in street_key else ""


def house_numbers_differ(a: str | None, b: str | None) -> bool:
    """Both streets have a house number, the numbers differ, and the rest is the same street."""
    if not a or not b or a == b:
        return False
    first, second = house_number(a), house_number(b)
    if not first or not second or first == second:
        return False
    rest_a, rest_b = _street_without_number(a), _street_without_number(b)
    return bool(rest_a) and (rest_a == rest_b or fuzz.ratio(rest_a, rest_b) >= STREET_CLOSE)


def conflict(a: MatchKeys, b: MatchKeys) -> str | None:
    """The strong evidence on which ``a`` and ``b`` disagree (a veto), or None: ``phone``, ``website``,
    ``house_number``, ``licence``, ``npi``, ``ein`` or ``cik``."""
    if a.phone or a.website or a.identifiers:
        mine = strong_evidence(a.phone, a.website, a.identifiers)
        theirs = strong_evidence(b.phone, b.website, b.identifiers) if b.phone or b.website or b.identifiers else {}
        for kind, values in mine.items():
            other = theirs.get(kind)
            if other is not None and values.isdisjoint(other):
                return VETO_REASONS.get(kind, "licence")
    if house_numbers_differ(a.street_key, b.street_key):
        return "house_number"
    return None


@dataclass(frozen=True, slots=True)
class Decision:
    """How two records compare: the rule that joins them (None when they stay apart), the name score,
    and the veto that kept apart what the rule would have joined."""

    rule: str | None
    score: float
    veto: str | None = None

    @property
    def possible_duplicate(self) -> bool:
        """Held apart by a veto although their names are nearly equal: for an operator to review."""
        return self.veto is not None and self.score >= NAME_THRESHOLD


@lru_cache(maxsize=1 << 12)
def _names(name_key: str, identifiers: frozenset[str]) -> tuple[str, ...]:
    return (name_key, *(match_name(other) for other in other_names(identifiers)))


def names_score(a: MatchKeys, b: MatchKeys) -> float:
    """How alike the two records' names are, 0-100: their matching names, and where one is known by
    other names too (a DBA), the best of every pair."""
    if a.name_key == b.name_key:
        return 100.0
    score = name_similarity(a.name_key, b.name_key)
    if score < 100.0 and (a.identifiers or b.identifiers):
        names_a, names_b = _names(a.name_key, a.identifiers), _names(b.name_key, b.identifiers)
        if len(names_a) > 1 or len(names_b) > 1:
            score = max(100.0 if x == y else name_similarity(x, y) for x in names_a for y in names_b)
    return score


def unvetoed_rule(a: MatchKeys, b: MatchKeys, threshold: float = NAME_THRESHOLD) -> tuple[str, float] | None:
    """The rule that would join ``a`` and ``b`` (with the name score) if no veto held them apart."""
    if a.state != b.state:
        return None
    score = names_score(a, b)
    if a.phone and a.phone == b.phone and score >= PHONE_NAME_FLOOR and not a.phone.startswith(TOLL_FREE):
        return "phone", score
    if a.city_key != b.city_key or not addresses_compatible(a, b):
        return None
    if score == 100.0:
        return "name_address", score
    if score >= threshold:
        return "fuzzy_name", score
    return None


def decide(a: MatchKeys, b: MatchKeys, *, threshold: float = NAME_THRESHOLD) -> Decision | None:
    """The comparison of ``a`` and ``b``; None when no rule would join them, vetoes aside."""
    found = unvetoed_rule(a, b, threshold)
    if found is None:
        return None
    rule, score = found
    veto = conflict(a, b)
    return Decision(rule, score) if veto is None else Decision(None, score, veto)


def match_rule(a: MatchKeys, b: MatchKeys, *, threshold: float = NAME_THRESHOLD) -> tuple[str, float] | None:
    """The rule by which ``a`` and ``b`` are one business, with the name score; None when they are not
    (no rule joins them, or a veto keeps them apart)."""
    decision = decide(a, b, threshold=threshold)
    if decision is None or decision.rule is None:
        return None
    return decision.rule, decision.score


_RULE_ORDER = {"name_address": 0, "phone": 1, "fuzzy_name": 2}
# At most this many possible duplicates are reported for one record (a cluster of same-named
# records at one address would otherwise report every pair).
MAX_HELD_APART = 5


@dataclass(frozen=True, slots=True)
class Resolution:
    """A record's best match among candidates (id and rule), and the candidates a veto held apart
    although their names are nearly equal (id, veto, name score), surest first."""

    choice: tuple[int, str] | None
    held_apart: tuple[tuple[int, str, float], ...] = ()


def resolve_among(
    keys: MatchKeys, candidates: list[tuple[int, MatchKeys]], *, threshold: float = NAME_THRESHOLD
) -> Resolution:
    best: tuple[int, float, int, str] | None = None
    held: list[tuple[float, int, str]] = []
    for candidate_id, other in candidates:
        decision = decide(keys, other, threshold=threshold)
        if decision is None:
            continue
        if decision.rule is None:
            if decision.possible_duplicate:
                assert decision.veto is not None
                held.append((-decision.score, candidate_id, decision.veto))
            continue
        rank = (_RULE_ORDER[decision.rule], -decision.score, candidate_id)
        if best is None or rank < (best[0], best[1], best[2]):
            best = (rank[0], rank[1], candidate_id, decision.rule)
    held.sort()
    return Resolution(
        (best[2], best[3]) if best is not None else None,
        tuple((candidate_id, veto, -score) for score, candidate_id, veto in held[:MAX_HELD_APART]),
    )


def best_match(
    keys: MatchKeys, candidates: list[tuple[int, MatchKeys]], *, threshold: float = NAME_THRESHOLD
) -> tuple[int, str] | None:
    """The candidate ``keys`` is the same business as (id and rule), the surest first; None if none."""
    return resolve_among(keys, candidates, threshold=threshold).choice
