"""The trade vocabulary: the words people use for a trade, and the catalogue's words for it.

Files in the synonym format of Solr and Elasticsearch, one rule a line:

    attorney, lawyer, law firm                  # equivalent: any of them finds all of them
    realtor, real estate agent => real estate   # one way: the left finds the right
    # a comment; blank lines are skipped

A term is one or more words; the words a question types always match as well, so ``a => b`` adds
``b`` to what ``a`` finds and never takes ``a`` away. Terms are compared as search reads words (folded,
punctuation cut, plurals read as their singular: ``vpx.contacts.search.language.stem``), so
"Attorneys" in a question meets "attorney" in a rule.

The service reads ``data/trades.txt`` (built by ``vpx.contacts.search.vocabulary_build`` from the
published lists: the NUCC taxonomy, the NAICS 2022 titles, the CSLB classifications),
``data/everyday.txt`` (people's words and abbreviations no list publishes, written by hand), and an
operator's own file (``VPX_SEARCH_SYNONYMS``), which adds to both.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from rapidfuzz.distance import OSA

from vpx.contacts.normalise import words
from vpx.contacts.search.language import plural, stem

BUILT_IN = ("data/trades.txt", "data/everyday.txt", "data/activities.txt")
# The longest term, in words, a rule may have (and so the longest run of a question's words looked up).
MAX_TERM_WORDS = 6

Phrase = tuple[str, ...]


class VocabularyError(ValueError):
    """A rule that cannot be read: the message names the file and line."""


@dataclass(frozen=True)
class Match:
    """A run of a question's words that a rule knows: where it starts and ends, and the catalogue's
    phrases it also finds (each as folded words)."""

    start: int
    end: int
    phrases: frozenset[Phrase]


class Vocabulary:
    def __init__(self) -> None:
        # A term's key (its words' stems) -> the phrases it also finds.
        self._finds: dict[Phrase, set[Phrase]] = defaultdict(set)
        # Every word of the terms (their stems), the one-word terms, and the words' spellings
        # (singular and plural, by length) that a typo is measured against.
        self._words: set[str] = set()
        self._alone: set[str] = set()
        self._spellings: dict[int, set[str]] = defaultdict(set)
        self.rules = 0

    def add_rules(self, text: str, *, source: str) -> None:
        """Reads rules; raises VocabularyError naming ``source`` and the line of the first bad one."""
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            try:
                self._add_rule(line)
            except VocabularyError as exc:
                raise VocabularyError(f"{source}, line {number}: {exc}") from None

    def _add_rule(self, line: str) -> None:
        if line.count("=>") > 1:
            raise VocabularyError("a rule has at most one '=>'")
        if "=>" in line:
            left, right = line.split("=>")
            sources, targets = _terms(left, "left of '=>'"), _terms(right, "right of '=>'")
        else:
            sources = targets = _terms(line, "the rule")
            if len(sources) < 2:
                raise VocabularyError("a rule without '=>' names at least two terms, separated by commas")
        for term in sources:
            self._finds[key(term)].update(targets)
            for word in term:
                self._words.add(stem(word))
                for spelling in _spellings(word):
                    self._spellings[len(spelling)].add(spelling)
            if len(term) == 1:
                self._alone.add(stem(term[0]))
        self.rules += 1

    def knows(self, word: str) -> bool:
        """Whether ``word`` (or its singular) is a word of a rule's term: a word people use for a trade."""
        return stem(word) in self._words

    def nearest(self, word: str, budget: int, *, also: Iterable[str] = ()) -> tuple[str, ...]:
        """The words of the rules' terms (and ``also``), singular or plural, within ``budget`` edits
        of ``word`` (optimal string alignment), as their singular: the nearest ones, those that are a
        term on their own first, then those of the closest length ("plumbrs" → plumber;
        "physicans" → physician, not the "physical" of "physical therapist")."""
        if budget <= 0:
            return ()
        extra: dict[int, set[str]] = defaultdict(set)
        alone = set(self._alone)
        for other in also:
            alone.add(stem(other))
            for spelling in _spellings(other):
                extra[len(spelling)].add(spelling)
        scored = set()
        for size in range(len(word) - budget, len(word) + budget + 1):
            for spelling in self._spellings.get(size, set()) | extra.get(size, set()):
                distance = OSA.distance(word, spelling, score_cutoff=budget)
                if distance <= budget:
                    singular = stem(spelling)
                    scored.add((distance, singular not in alone, abs(len(spelling) - len(word)), singular))
        if not scored:
            return ()
        best = min(scored)[:2]
        return tuple(dict.fromkeys(term for *rank, _, term in sorted(scored) if tuple(rank) == best))

    def finds(self, phrase: Phrase) -> frozenset[Phrase]:
        """The phrases a term (folded words) also finds; empty when no rule names it."""
        return frozenset(self._finds.get(key(phrase), ()))

    def matches(self, tokens: list[str]) -> list[Match]:
        """The runs of ``tokens`` that rules know, longest first from the left, not overlapping."""
        found, start = [], 0
        while start < len(tokens):
            for end in range(min(len(tokens), start + MAX_TERM_WORDS), start, -1):
                phrases = self._finds.get(key(tuple(tokens[start:end])))
                if phrases:
                    found.append(Match(start, end, frozenset(phrases)))
                    start = end
                    break
            else:
                start += 1
        return found


def _spellings(word: str) -> tuple[str, str]:
    singular = stem(word)
    return singular, plural(singular)


def key(phrase: Iterable[str]) -> Phrase:
    return tuple(stem(word) for word in phrase)


def _terms(text: str, where: str) -> list[Phrase]:
    terms = []
    for part in text.split(","):
        if not part.strip():
            raise VocabularyError(f"an empty term in {where}")
        term = tuple(words(part))
        if not term:
            raise VocabularyError(f"the term {part.strip()!r} has no letters or digits")
        if len(term) > MAX_TERM_WORDS:
            raise VocabularyError(f"the term {part.strip()!r} has more than {MAX_TERM_WORDS} words")
        terms.append(term)
    return terms


@cache
def built_in() -> Vocabulary:
    return load(None)


def load(extra: Path | None) -> Vocabulary:
    """The built-in rules, and an operator's file after them; VocabularyError for a bad line."""
    vocabulary = Vocabulary()
    package = resources.files("vpx.contacts.search")
    for name in BUILT_IN:
        vocabulary.add_rules(package.joinpath(name).read_text(encoding="utf-8"), source=name)
    if extra is not None:
        try:
            text = extra.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise VocabularyError(f"{extra}: cannot be read ({exc.__class__.__name__})") from None
        vocabulary.add_rules(text, source=str(extra))
    return vocabulary
