"""The set algebra of an answer: which contacts a question matches, in which order, and which of its
words it could do without, worked out from the bitmaps of its terms (vpx.contacts.search.postings).

Every word first: the answer holds the contacts that match every word of the question that is not
filler or a role word (vpx.contacts.search.plan), within the filters and the place. When none does, the
answer leaves words out, the fewest it can and the least informative first, and says which
(``_fewer_words``): a word that matches nothing or only starts longer words goes first, then words the
trade vocabulary does not know (a modifier such as "emergency"), then the later words. The total
counts the contacts that match every word kept.

The order, each tier in contact id order:
0. (a place read from the words without "in" or "near") the business name holds the question's words
   and the place's: "Boston Dental" is that business wherever it is;
1. the business name holds the words as typed (or their other forms), filler words included first;
2. the name holds them with a typo's corrections;
3. the name or specialty holds them or the vocabulary's words for them: what the business is;
4. the licence type does (a licence is shared by several trades: "Real Estate Broker" is held by
   property managers too, "Medical Doctor (MD)" by every physician);
5. those of tiers 2 to 4 whose specialty says they are another kind of business than the trade
   (a supplier, a utility, software, staffing: OTHER_KINDS), unless the question says so too;
6. anything else that matches (the words found only in the industry or the city).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from pyroaring import BitMap

from vpx.contacts.search import postings
from vpx.contacts.search.language import stem
from vpx.contacts.search.plan import ROLE_WORDS, Clause, Option, Plan
from vpx.contacts.search.terms import NAME, OTHER_KIND, OTHER_KINDS, SPECIALTY, TEXT_FIELDS, TRADE_FIELDS

# Words after which a question says what for or with what, not what business ("braces for kids").
PURPOSE_WORDS = frozenset({"for", "with"})


@dataclass
class Terms:
    """The bitmaps one question needs, read (or remembered) and brought up to date with the changes
    pending in its view."""

    exact: dict[str, BitMap] = field(default_factory=dict)
    prefixed: dict[str, BitMap] = field(default_factory=dict)
    # What was worked out of them (a word's or a clause's contacts in some fields): a ranking asks
    # the same union of large bitmaps several times. Never changed once made; forgotten by ``add``.
    worked: dict[tuple[object, ...], BitMap] = field(default_factory=dict, repr=False)

    def term(self, term: str) -> BitMap:
        return self.exact.get(term) or BitMap()

    def word(self, fields: tuple[str, ...], word: str, prefix: bool) -> BitMap:
        key = (fields, word, prefix)
        found = self.worked.get(key)
        if found is None:
            source = self.prefixed if prefix else self.exact
            parts = [source[f + word] for f in fields if f + word in source]
            found = self.worked[key] = parts[0] if len(parts) == 1 else BitMap.union(*parts) if parts else BitMap()
        return found

    def add(self, exact: dict[str, BitMap]) -> None:
        """More exact terms (what was worked out before may have missed them)."""
        self.exact.update(exact)
        self.worked.clear()


def wanted_terms(plan: Plan) -> tuple[set[str], set[str]]:
    """The exact terms and the prefixes a plan reads."""
    exact: set[str] = set()
    prefixes: set[str] = set()
    for clause, fields in clause_fields(plan):
        shown = tuple(f for f in fields if f in TRADE_FIELDS)
        for option, where in [(o, fields) for o in clause.typed] + [(o, shown) for o in clause.related]:
            for i, word in enumerate(option.words):
                target = prefixes if option.prefix and i == len(option.words) - 1 else exact
                target.update(f + word for f in where)
    for clause in plan.place_name:
        for option in clause.typed:
            exact.update(NAME + word for word in option.words)
    exact.update(other_kind_terms(plan))
    return exact, prefixes


def other_kind_terms(plan: Plan) -> set[str]:
    """The terms of the businesses of another kind than the trade asked for (OTHER_KINDS): one term,
    or, when the question says one of those words itself ("electrical supply"), the others' own."""
    if not plan.clauses:
        return set()
    asked = {w for c in plan.clauses for o in (*c.typed, *c.related) for w in (*c.words, *o.words)}
    if asked & OTHER_KINDS:
        return {SPECIALTY + word for word in OTHER_KINDS - asked}
    return {OTHER_KIND}


def whole_terms(plan: Plan) -> set[str]:
    """The exact terms of the words typed as prefixes: whether each is a whole word too (``_whole``),
    which only an answer that must leave words out asks."""
    exact: set[str] = set()
    for clause, fields in clause_fields(plan):
        for option in clause.typed:
            if option.prefix:
                exact.update(f + word for word in option.words for f in fields)
    return exact


def needs_fewer_words(terms: Terms, plan: Plan, restrict: list[BitMap]) -> bool:
    """Whether no contact matches every required word of the plan within ``restrict``."""
    required = [clause_ids(terms, c, TEXT_FIELDS) for c in plan.required]
    return bool(required) and not intersection(required + restrict)


def clause_fields(plan: Plan) -> Iterable[tuple[Clause, tuple[str, ...]]]:
    for clause in plan.clauses:
        yield clause, TEXT_FIELDS
    for clause in plan.specialty:
        yield clause, (SPECIALTY,)
    for clause in plan.license_type:
        yield clause, ("l:",)


def option_ids(terms: Terms, option: Option, fields: tuple[str, ...]) -> BitMap:
    last = len(option.words) - 1
    if last == 0:
        return terms.word(fields, option.words[0], option.prefix)
    per_field = []
    for f in fields:
        parts = [terms.word((f,), w, option.prefix and i == last) for i, w in enumerate(option.words)]
        per_field.append(BitMap.intersection(*parts))
    return BitMap.union(*per_field)


def clause_ids(
    terms: Terms, clause: Clause, fields: tuple[str, ...], *, typed_only: bool = False, literal: bool = False
) -> BitMap:
    """Contacts that satisfy a clause in these fields: its words as typed anywhere in them (``literal``:
    without a typo's corrections), the vocabulary's words only where a trade shows itself (name,
    specialty, licence): "real estate" for "realtors" is not every business of the real-estate industry."""
    if literal and not any(option.corrected for option in clause.typed):
        literal, typed_only = False, True  # the same contacts: worked out once
    key = (id(clause), fields, typed_only, literal)
    remembered = terms.worked.get(key)
    if remembered is not None:
        return remembered
    if not fields:
        result = BitMap()
    else:
        # The fields one by one onto those before (name; name and specialty; ...): a ranking asks
        # for growing sets of fields, each one union more than the last.
        last = fields[-1]
        typed = [o for o in clause.typed if not (literal and o.corrected)]
        found = [option_ids(terms, option, (last,)) for option in typed]
        if not (typed_only or literal) and last in TRADE_FIELDS:
            found += [option_ids(terms, option, (last,)) for option in clause.related]
        if len(fields) > 1:
            found.append(clause_ids(terms, clause, fields[:-1], typed_only=typed_only, literal=literal))
        found = [bitmap for bitmap in found if bitmap]
        result = found[0] if len(found) == 1 else BitMap.union(*found) if found else BitMap()
    terms.worked[key] = result
    return result


def all_of(parts: Sequence[BitMap], base: BitMap) -> BitMap:
    result = base
    for part in sorted(parts, key=len):
        result = result & part
        if not result:
            break
    return result


def intersection(parts: Sequence[BitMap]) -> BitMap:
    ordered = sorted(parts, key=len)
    return all_of(ordered[1:], ordered[0]) if ordered else BitMap()


@dataclass(frozen=True)
class Ranked:
    """A question's tiers in page order, every contact it matches, and the words it left out. Tiers
    may overlap (a contact ranks in the first that holds it: ``page``); each is within ``everything``,
    whose size is the answer's total."""

    tiers: list[BitMap]
    everything: BitMap
    dropped: tuple[str, ...] = ()


def rank(terms: Terms, plan: Plan, restrict: list[BitMap], unplaced: list[BitMap] | None) -> Ranked:
    """The answer to a plan with words, within ``restrict`` (the filters' and the place's bitmaps;
    none: every active contact, which the words' terms hold only). ``unplaced``: the filters without the place, when
    the place was read from the words without "in" or "near" (tier 0)."""
    required = list(plan.required)
    bitmaps = [clause_ids(terms, c, TEXT_FIELDS) for c in required]
    everything = intersection(bitmaps + restrict)
    kept = required
    optional = [c for c in plan.clauses if c.optional and not c.filler]
    if not everything:
        kept, everything = _fewer_words(terms, plan.clauses, required, optional, restrict)
        optional = [c for c in optional if c not in kept]
    filler = [c for c in plan.clauses if c.filler]
    left_out = [c for c in required if c not in kept]
    dropped = tuple(w for c in plan.clauses if c.filler or c in left_out for w in c.words)
    tiers: list[BitMap] = []
    if unplaced is not None and plan.place_name and not left_out:
        in_name = [clause_ids(terms, c, (NAME,), typed_only=True) for c in [*kept, *optional, *plan.place_name]]
        named_here = intersection(in_name + unplaced)
        tiers.append(named_here)
        everything = everything | named_here
    if not everything:
        return Ranked([everything], everything, dropped)
    literal = all_of([clause_ids(terms, c, (NAME,), literal=True) for c in [*kept, *optional]], everything)
    if filler:
        tiers.append(all_of([clause_ids(terms, c, (NAME,), literal=True) for c in filler], literal))
    tiers.append(literal)
    named = all_of([clause_ids(terms, c, (NAME,), typed_only=True) for c in [*kept, *optional]], everything)
    shown = all_of([clause_ids(terms, c, (NAME, SPECIALTY)) for c in kept], everything)
    trade = all_of([clause_ids(terms, c, TRADE_FIELDS) for c in kept], everything)
    # Of another kind, unless the question's words or the vocabulary's for them say so ("temp agency"
    # asks for staffing).
    other_kind = [terms.term(term) for term in sorted(other_kind_terms(plan))]
    demoted = (named | trade) & BitMap.union(*other_kind) if other_kind else BitMap()
    tiers += [named - demoted, shown - demoted, trade - demoted, demoted, everything]
    return Ranked(tiers, everything, dropped)


def _fewer_words(
    terms: Terms, clauses: Sequence[Clause], required: list[Clause], roles: list[Clause], restrict: list[BitMap]
) -> tuple[list[Clause], BitMap]:
    """The most words that some contacts match together, and those contacts. Of the sets of that many
    words, the one that keeps the most words matched as whole words ("cat" only starts cattle and
    catering), then the fewest words that only say what kind of business ("hvac mechanic": hvac;
    "engineering consultant": engineering; "propane supplier": propane), then the most words the
    vocabulary has a rule for, then the most it knows ("emergency dental": dental), then the fewest
    optional role words, then the fewest words after "for" or "with" ("braces for kids": braces),
    then the fewest contacts (the rarer word says more: "waste management": waste, "cattle farm":
    cattle), then the latest words (a trade is the last noun of its name).
    An optional role word is a candidate only when the vocabulary has a rule for it alone ("drainage
    service" is not every service), and an answer keeps at least one word."""
    candidates = required + [c for c in roles if c.related]
    order = {id(c): i for i, c in enumerate(clauses)}
    purpose = next((i for i, c in enumerate(clauses) if c.filler and c.words[0] in PURPOSE_WORDS), len(clauses))
    after = [order[id(c)] > purpose for c in candidates]
    within = [intersection([clause_ids(terms, c, TEXT_FIELDS), *restrict]) for c in candidates]
    whole = [_whole(terms, c) for c in candidates]
    roles_ = [_kind_only(c) for c in candidates]
    for size in range(min(len(required), len(candidates) - 1), 0, -1):
        best: tuple[tuple[int, ...], tuple[int, ...], BitMap] | None = None
        for chosen in combinations(range(len(candidates)), size):
            if any(not within[i] for i in chosen):
                continue
            found = intersection([within[i] for i in chosen])
            if not found:
                continue
            weight = (
                -sum(whole[i] for i in chosen),
                sum(roles_[i] for i in chosen),
                -sum(bool(candidates[i].related) for i in chosen),
                -sum(candidates[i].known for i in chosen),
                sum(candidates[i].optional for i in chosen),
                sum(after[i] for i in chosen),
                len(found),
                -sum(order[id(candidates[i])] for i in chosen),
            )
            if best is None or weight < best[0]:
                best = (weight, chosen, found)
        if best is not None:
            return [candidates[i] for i in best[1]], best[2]
    return [], BitMap()


def _kind_only(clause: Clause) -> bool:
    """Whether a clause's words only say what kind of business ("mechanic", "consultant", "supplier"),
    not which trade: the first to leave out, even where the vocabulary has a rule for them."""
    return all(stem(word) in ROLE_WORDS or word in OTHER_KINDS for word in clause.words)


def _whole(terms: Terms, clause: Clause) -> bool:
    """Whether some contact holds the clause's words as whole words (as typed, another form, or the
    vocabulary's), not only as the start of longer ones."""
    for option in clause.typed:
        exact = Option(option.words)
        if option_ids(terms, exact, TEXT_FIELDS):
            return True
    return any(option_ids(terms, option, TRADE_FIELDS) for option in clause.related)


def apply_pending(terms: Terms, view: postings.View) -> None:
    """Brings the bitmaps read up to the pending changes: each changed contact is in a term's bitmap
    exactly when it has the term now (new bitmaps are made, never the remembered ones changed)."""
    changed = view.changed
    for key, bitmap in list(terms.exact.items()):
        members = view.by_term.get(key)
        if members or bitmap.intersect(changed):
            terms.exact[key] = (bitmap - changed) | (members or BitMap())
    for key, bitmap in list(terms.prefixed.items()):
        members = view.having_prefix(key)
        if members or bitmap.intersect(changed):
            terms.prefixed[key] = (bitmap - changed) | members


def up_to(bitmap: BitMap, highest: int) -> BitMap:
    if not bitmap or bitmap.max() <= highest:
        return bitmap
    kept = bitmap.copy()
    kept.remove_range(highest + 1, postings.MOST_ID + 1)
    return kept


def page(tiers: list[BitMap], limit: int) -> list[int]:
    """The first ``limit`` contacts of the tiers in order, each in the first tier that holds it: the
    later tiers are not looked at once the page is full (a first answer's most common case)."""
    ids: list[int] = []
    seen = BitMap()
    for tier in tiers:
        if len(ids) >= limit:
            break
        fresh = tier - seen if seen else tier
        ids.extend(fresh[: limit - len(ids)])
        seen |= tier
    return ids
