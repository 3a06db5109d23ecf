"""How search reads people's words: inflections (places: vpx.contacts.search.places).

- ``stem``: a conservative English stemmer for plurals only ("dentists" → dentist, "pharmacies" →
  pharmacy, "churches" → church), the same on both databases because it runs here, in Python, on the
  question's words; the catalogue's words are indexed as written. It never touches the words of
  ``data/no_stem.txt``: family names whose singular is another word ("Wells" is not "well",
  "Williams" is not "William"), and words that only look plural ("texas", "news").
- ``forms``: the words a question word also matches: its stem and the stem's plural.

docs/search.md says which cases were checked and why.
"""

from __future__ import annotations

from functools import cache, lru_cache
from importlib import resources

# Shorter words are left alone: "gas", "bus", "its" and most two- and three-letter words are not plurals.
_SHORTEST = 4
# Endings after which a final "s" is not a plural: class, campus, analysis, physics is kept (see below).
_NOT_PLURAL_AFTER = ("ss", "us", "is", "ous")


@cache
def no_stem_words() -> frozenset[str]:
    """The words never stemmed (data/no_stem.txt: one word a line, ``#`` comments)."""
    text = resources.files("vpx.contacts.search").joinpath("data/no_stem.txt").read_text(encoding="utf-8")
    return frozenset(line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip())


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A plural's singular, else the word itself. Only plurals: agent nouns and other derived words
    ("plumber" → plumbing) are the trade vocabulary's business, where they can be checked."""
    if len(word) < _SHORTEST or not word.isalpha() or word in no_stem_words():
        return word
    if word.endswith("ies") and len(word) > _SHORTEST:
        return word[:-3] + "y"  # pharmacies, bakeries, companies
    if word.endswith(("sses", "shes", "ches", "xes", "zzes")):
        return word[:-2]  # glasses, brushes, churches, boxes, buzzes
    if word.endswith("s") and not word.endswith(_NOT_PLURAL_AFTER):
        return word[:-1]  # dentists, clinics, services, houses, sizes
    return word


@lru_cache(maxsize=65_536)
def plural(word: str) -> str:
    """The regular plural of a singular noun (for the forms a question word also matches)."""
    if word.endswith("y") and len(word) > 2 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def forms(word: str) -> tuple[str, ...]:
    """Other words ``word`` also matches, exactly: a plural's singular ("dentists" → dentist), and a
    singular's plural where prefix matching does not reach it ("pharmacy" → pharmacies). Empty for a
    word that is neither, and for the words never stemmed. Where an ending reads two ways both
    singulars are given ("movies": movy, movie; "caches": cach, cache): one of them is a word."""
    if len(word) < _SHORTEST or not word.isalpha() or word in no_stem_words():
        return ()
    singular = stem(word)
    if singular != word:
        other = word[:-1]
        return (singular, other) if other != singular and word.endswith("es") else (singular,)
    many = plural(word)
    # "dentist" as a prefix already matches "dentists"; "pharmacy" does not match "pharmacies".
    return () if many.startswith(word) else (many,)
