"""A question's words planned for the postings: each part of the question is a clause that any of
its options satisfies.

- The words as typed, each as a prefix ("plumb" finds plumbing), with their other forms ("dentists"
  → dentist, vpx.contacts.search.language) and, for a word no catalogue word starts with, its typo
  corrections ("plumbng" → plumbing).
- The trade vocabulary's phrases for a run of words it knows (vpx.contacts.search.vocabulary):
  "realtors" also finds "realty" and "real estate"; "insurance agents" finds "insurance".
- A role word beside other words ("agents", "services", "contractors": ROLE_WORDS) is optional:
  "hvac contractors" finds every HVAC business, and one named "… HVAC Contractors" ranks first.
- Filler ("near me", "best", "the", "local": FILLER_WORDS) is optional too, and said to be left out;
  a name that holds it still ranks first ("Best Plumbing" for "best plumbing").
- A word that is a frequent name in the catalogue ("Sawyer", "Booker", "Gardner") is never read as a
  typo of the vocabulary's words ("lawyer", "broker", "gardener").

A phrase of several words matches when its words are all in one field of a contact.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from rapidfuzz.distance import OSA

from vpx.contacts.normalise import words
from vpx.contacts.search.language import forms, no_stem_words, plural, stem
from vpx.contacts.search.vocabulary import Match, Phrase, Vocabulary

MAX_QUERY_WORDS = 8
# A word of this many letters or more is also a prefix of longer words ("pl" finds plumbing).
MIN_PREFIX = 2
# Unless the vocabulary knows it and it is this short: an abbreviation ("pt", "ent", "cpa").
SHORT_WORD = 3
# Words this long or longer are corrected to the vocabulary's words too ("rofers" → roofer, not the
# catalogue's "Rogers"), and this long when the catalogue has no correction for them ("plumbrs").
MIN_VOCABULARY_TYPO = 5
MIN_UNKNOWN_TYPO = 6
# Words that say what kind of business or work, not which trade: optional beside a trade's own words
# (their singular forms; docs/search.md): the roles of a business ("agents", "contractors"), of the
# people in it ("technician", "worker"), and the work done ("repair", "installation", "cleaning").
ROLE_WORDS = frozenset(
    {
        "agency", "agent", "broker", "business", "company", "contractor", "expert", "firm", "installer",
        "instructor", "office", "pro", "professional", "provider", "service", "shop", "specialist", "store",
        # people
        "advisor", "adviser", "consultant", "mechanic", "officer", "operator", "repairer",
        "technician", "tech", "worker",
        # places of work
        "center", "centre", "clinic", "facility",
        # the work
        "cleaning", "inspection", "install", "installation", "maintenance", "removal", "repair", "replacement",
    }
)  # fmt: skip
# Words that say nothing of the business asked for: optional, never emptying an answer (a question
# of filler alone searches for it as words). "near me" and its kin, praise, and the little words.
FILLER_WORDS = frozenset(
    {
        "a", "an", "and", "any", "around", "at", "best", "by", "cheap", "close", "find", "for", "from", "good",
        "great", "here", "in", "local", "looking", "me", "my", "near", "nearby", "nearest", "now", "of", "on",
        "open", "or", "reliable", "the", "to", "top", "trusted", "with",
    }
)  # fmt: skip
# A word held by at least this many business names is a name, never a typo of a vocabulary word.
FREQUENT_NAME = 5


@dataclass(frozen=True)
class Option:
    """One way to satisfy a clause: these words, all in one field of a contact, the last one as a
    prefix when ``prefix``; ``corrected`` when they are a typo's correction, not what was typed."""

    words: Phrase
    prefix: bool = False
    corrected: bool = False


@dataclass(frozen=True)
class Clause:
    """A part of the question: ``typed`` are its words as written (with their other forms and typo
    corrections), what a business named with them has; ``related`` the vocabulary's phrases for them.
    An ``optional`` clause (a role word, or ``filler``) only decides the first tiers; ``words`` are
    the question's words it stands for."""

    typed: tuple[Option, ...]
    related: tuple[Option, ...] = ()
    optional: bool = False
    words: tuple[str, ...] = ()
    filler: bool = False
    # Whether the vocabulary knows its words: a word people use for a trade (kept longest when words
    # must be left out: vpx.contacts.search.matching).
    known: bool = False

    @property
    def options(self) -> tuple[Option, ...]:
        return self.typed + self.related


@dataclass(frozen=True)
class Plan:
    clauses: tuple[Clause, ...] = ()
    specialty: tuple[Clause, ...] = ()
    license_type: tuple[Clause, ...] = ()
    # The words of a place read without "in" or "near", as a business name would hold them.
    place_name: tuple[Clause, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.clauses or self.specialty or self.license_type)

    @property
    def required(self) -> tuple[Clause, ...]:
        return tuple(clause for clause in self.clauses if not clause.optional)


Corrections = Callable[[str], Awaitable[tuple[str, ...]]]
# Whether a word is a frequent name in the catalogue (FREQUENT_NAME).
Names = Callable[[str], Awaitable[bool]]


async def _never(word: str) -> bool:
    return False


def max_edits(word: str) -> int:
    """The edit budget of a typo (as the engine's corrections: one, or two for long words)."""
    return 1 if len(word) < 8 else 2


async def plan_words(
    text: str | None, vocabulary: Vocabulary, corrections: Corrections, names: Names = _never
) -> tuple[Clause, ...]:
    """The clauses of a question's words."""
    if not text:
        return ()
    tokens = words(text)[:MAX_QUERY_WORDS]
    fixes, reading = await _corrected(tokens, vocabulary, corrections, names)
    spans = {match.start: match for match in vocabulary.matches(reading)}
    clauses: list[Clause] = []
    index = 0
    while index < len(tokens):
        match = spans.get(index)
        if match is not None and match.end - match.start > 1:
            # The last word as a prefix ("real estate agents"), unless it is an abbreviation's ("ob gyn").
            open_end = len(tokens[match.end - 1]) > SHORT_WORD
            run = {Option(tuple(tokens[match.start : match.end]), prefix=open_end)}
            run.add(Option(tuple(reading[match.start : match.end]), prefix=open_end))
            typed_run = tuple(sorted(run, key=lambda option: option.words))
            related = _related(_with_core(match, reading, vocabulary), typed_run)
            run_words = tuple(tokens[match.start : match.end])
            clauses.append(Clause(typed=typed_run, related=related, words=run_words, known=True))
            index = match.end
            continue
        word = tokens[index]
        if match is None and (word in FILLER_WORDS or len(word) == 1):
            # As a whole word, without corrections: it only decides whether a name holding it ranks first.
            clauses.append(Clause(typed=(Option((word,)),), optional=True, words=(word,), filler=True))
            index += 1
            continue
        # A short word the vocabulary knows is a whole word ("do", "pt", "ent"), not the start of one.
        prefix = len(word) >= MIN_PREFIX and not (len(word) <= SHORT_WORD and vocabulary.knows(word))
        typed: tuple[Option, ...] = (Option((word,), prefix=prefix),)
        typed += tuple(Option((other,)) for other in forms(word))
        for other in fixes.get(index, ()):
            typed += tuple(Option((form,), corrected=True) for form in (other, *exact_forms(other)))
        phrases = set(match.phrases) if match is not None else set()
        # A catalogue word's correction brings what the vocabulary finds for it ("attorny":
        # attorney, lawyer, law); of the vocabulary's own, the one the question is read as.
        for other in fixes.get(index, ()) if reading[index] == word else ():
            phrases |= vocabulary.finds((other,))
        related = _related(phrases, typed) if phrases else ()
        optional = match is None and stem(reading[index]) in ROLE_WORDS
        known = match is not None or vocabulary.knows(reading[index])
        clauses.append(
            Clause(typed=tuple(dict.fromkeys(typed)), related=related, optional=optional, words=(word,), known=known)
        )
        index += 1
    if all(clause.filler for clause in clauses):
        return tuple(dataclasses.replace(c, optional=False, filler=False) for c in clauses)
    if all(clause.optional for clause in clauses):
        return tuple(dataclasses.replace(c, optional=c.filler) for c in clauses)
    return tuple(clauses)


async def _corrected(
    tokens: list[str], vocabulary: Vocabulary, corrections: Corrections, names: Names
) -> tuple[dict[int, tuple[str, ...]], list[str]]:
    """Each word's typo corrections, and the question as the vocabulary reads it (a typo of a word
    it knows read as that word: "plumbrs" → plumber, "travel agnets" → travel agents).

    A word the vocabulary knows needs none: "physician" is no typo of the catalogue's "physical".
    The vocabulary's nearest word wins over the catalogue's when it is as near or nearer ("rofers":
    roofers, not the family name Rogers), since a question about a trade is what it knows; but a
    frequent name of the catalogue is a name ("Sawyer" is no typo of lawyer)."""
    fixes: dict[int, tuple[str, ...]] = {}
    reading = list(tokens)
    for index, word in enumerate(tokens):
        if len(word) < 4 or word.isdigit() or word in FILLER_WORDS or vocabulary.knows(word):
            continue
        found = tuple(other for other in await corrections(word) if other != word)
        if set(found) & set(forms(word)):
            continue  # "cafes": the plural of a catalogue word ("cafe"), not a typo of "cares"
        budget = max_edits(word)
        if found:
            budget = min(budget, min(OSA.distance(word, other) for other in found))
        # No correction from the catalogue means either that no word of it is near or that it has
        # this word ("farms": no typo of "firms"); only a long word is read as the vocabulary's then.
        typo = len(word) >= (MIN_VOCABULARY_TYPO if found else MIN_UNKNOWN_TYPO) and word.isalpha()
        known = vocabulary.nearest(word, budget, also=ROLE_WORDS) if typo else ()
        if known and not found and await names(word):
            continue
        if known:
            fixes[index] = known
            reading[index] = known[0]
        elif found:
            fixes[index] = found
    return fixes, reading


def _with_core(match: Match, reading: list[str], vocabulary: Vocabulary) -> frozenset[Phrase]:
    """A run's phrases, and, when it holds role words ("hvac contractors"), what its other words find
    ("hvac": heating, air conditioning): a role word is optional inside a rule's term as outside."""
    run = reading[match.start : match.end]
    core = tuple(word for word in run if stem(word) not in ROLE_WORDS)
    if not core or len(core) == len(run):
        return match.phrases
    return match.phrases | vocabulary.finds(core)


def plan_filter(text: str | None) -> tuple[Clause, ...]:
    """A filter's words (``specialty``, ``license_type``): each as a prefix, nothing else."""
    if not text:
        return ()
    return tuple(Clause(typed=(Option((word,), prefix=True),)) for word in words(text)[:MAX_QUERY_WORDS])


def exact_forms(word: str) -> tuple[str, ...]:
    """The other forms an exact word (not a prefix) also matches: ``forms``, and a singular's plural
    even where it starts with the singular ("audit": audits), which a prefix would have found."""
    found = forms(word)
    if found or not word.isalpha() or word in no_stem_words() or stem(word) != word:
        return found
    return (plural(word),)


def _related(phrases: Iterable[Phrase], typed: tuple[Option, ...]) -> tuple[Option, ...]:
    """The vocabulary's phrases as options, each single word with its other forms; a phrase that
    holds every word of another option is left out (whatever it matches, the shorter one does)."""
    options: set[Option] = set()
    for phrase in phrases:
        options.add(Option(phrase))
        if len(phrase) == 1:
            options.update(Option((other,)) for other in exact_forms(phrase[0]))
    exact = {option.words for option in typed if not option.prefix} | {o.words for o in options}
    kept = [
        option
        for option in options
        if not any(shorter != option.words and set(shorter) <= set(option.words) for shorter in exact)
        and option not in typed
    ]
    return tuple(sorted(kept, key=lambda option: option.words))
