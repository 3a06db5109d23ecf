"""Where a question asks about: a place anywhere in its words, read against the US ZIP code list
(data/us_zip_codes.tsv.gz, vpx.contacts.search.places_build) and the catalogue's own cities.

``place_readings`` gives the ways a question's words can name a place, best first; the engine keeps the
first the catalogue holds (vpx.contacts.search.engine):

1. a 5-digit ZIP code anywhere ("dentist 78701"): the ZIP's city and state;
2. what follows the last "in" or "near" ("dentists in austin tx", "… near Austin, TX", "lawyers in
   texas"): a city, a city and a state (code or name), or a state;
3. a place at the end of the words without "in" or "near" ("hvac phoenix az", "plumber portland
   maine"), then one at their start ("Charleston SC roofers"): a US city (one the ZIP list names), with
   or without its state, or a state's name (its code too, at the end, where it is no common word).

City names are compared with their usual abbreviations either way: St/Saint, Ft/Fort, Mt/Mount ("st
paul" is the catalogue's "Saint Paul", "saint louis" its "St. Louis"). A city without a state is every
city of that name. A place read without "in" or "near" may be part of a business name ("Boston Dental",
"Austin Plumbing Co"): the engine ranks such names first, wherever they are.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import product

from vpx.contacts.normalise import words
from vpx.geography import STATE_CODES, STATES, TERRITORIES

# Words after which the rest of a question is its place.
PLACE_MARKERS = frozenset({"in", "near"})
# Abbreviations of a city name's first words, both ways.
CITY_ABBREVIATIONS = {"st": "saint", "saint": "st", "ft": "fort", "fort": "ft", "mt": "mount", "mount": "mt"}
# State codes that are words or abbreviations of their own ("in", "or", "me", "co", "pa", "md"…): read
# as a state only beside a city, or after "in"/"near".
AMBIGUOUS_CODES = frozenset(
    {"AL", "AS", "CO", "DE", "GA", "GU", "HI", "ID", "IN", "LA", "MA", "MD", "ME", "MO", "MP", "NE", "OH", "OK", "OR",
     "PA", "PR", "VI"}
)  # fmt: skip
STATE_NAMES: dict[tuple[str, ...], str] = {
    tuple(words(name)): code for code, name in {**STATES, **TERRITORIES}.items()
} | {("washington", "dc"): "DC", ("virgin", "islands"): "VI"}
LONGEST_STATE_NAME = max(len(name) for name in STATE_NAMES)
LONGEST_CITY_NAME = 4
ZIP_CODES = "data/us_zip_codes.tsv.gz"


@cache
def zip_places() -> dict[str, tuple[str, str]]:
    """Each ZIP code's city and state."""
    raw = resources.files("vpx.contacts.search").joinpath(ZIP_CODES).read_bytes()
    found = {}
    for line in gzip.decompress(raw).decode("utf-8").splitlines():
        if line and not line.startswith("#"):
            code, city, state = line.split("\t")
            found[code] = (city, state)
    return found


@cache
def city_names() -> frozenset[tuple[str, ...]]:
    """The words of every city the ZIP list names (and their abbreviations' other spellings)."""
    return frozenset(city_states())


@cache
def city_states() -> dict[tuple[str, ...], frozenset[str]]:
    """The states that have a city of each name (each spelling), by the ZIP list."""
    found: dict[tuple[str, ...], set[str]] = {}
    for city, state in zip_places().values():
        for spelling in spellings(tuple(words(city))):
            found.setdefault(spelling, set()).add(state)
    return {city: frozenset(states) for city, states in found.items()}


def spellings(city: tuple[str, ...]) -> list[tuple[str, ...]]:
    """A city's words and their other spellings (St/Saint, Ft/Fort, Mt/Mount), as written first."""
    choices = [(word, CITY_ABBREVIATIONS[word]) if word in CITY_ABBREVIATIONS else (word,) for word in city]
    return [tuple(choice) for choice in product(*choices)]


@dataclass(frozen=True)
class Reading:
    """A way to read a place in a question: the words left, the city's words (none for a state alone)
    and state, the ZIP code it came from, and whether it was marked ("in"/"near", or a ZIP code) or may
    be a business name's words (``named``: the words as typed)."""

    rest: tuple[str, ...]
    city: tuple[str, ...]
    state: str | None
    postal_code: str | None = None
    named: tuple[str, ...] = ()

    @property
    def marked(self) -> bool:
        return not self.named


def city_name(city: tuple[str, ...]) -> str | None:
    return " ".join(word.capitalize() for word in city) if city else None


def place_readings(tokens: list[str]) -> list[Reading]:
    """The ways the words (as ``normalise.words`` cuts them) can name a place, best first; a reading
    leaves at least one word."""
    found: list[Reading] = []
    for index, token in enumerate(tokens):
        if len(token) == 5 and token.isdigit() and token in zip_places():
            city, state = zip_places()[token]
            before = index - 1 if index > 0 and tokens[index - 1] in PLACE_MARKERS else index
            rest = tuple(tokens[:before] + tokens[index + 1 :])
            if rest:
                found.append(Reading(rest, tuple(words(city)), state, postal_code=token))
    for index in range(len(tokens) - 2, 0, -1):
        if tokens[index] in PLACE_MARKERS:
            place = _parse(tokens[index + 1 :], marked=True)
            if place is not None:
                found.append(Reading(tuple(tokens[:index]), place[0], place[1]))
            break
    size = min(len(tokens) - 1, LONGEST_CITY_NAME + LONGEST_STATE_NAME)
    for cut in range(size, 0, -1):
        place = _parse(tokens[-cut:], marked=False, last=True)
        if place is not None and _meaningful(tokens[:-cut]):
            found.append(Reading(tuple(tokens[:-cut]), place[0], place[1], named=tuple(tokens[-cut:])))
    for cut in range(size, 0, -1):
        place = _parse(tokens[:cut], marked=False, last=False)
        if place is not None and _meaningful(tokens[cut:]):
            found.append(Reading(tuple(tokens[cut:]), place[0], place[1], named=tuple(tokens[:cut])))
    return found


def _meaningful(rest: list[str]) -> bool:
    return bool(rest) and rest[-1] not in PLACE_MARKERS and rest[0] not in PLACE_MARKERS


def _parse(span: list[str], *, marked: bool, last: bool = True) -> tuple[tuple[str, ...], str | None] | None:
    """A city and state, a city, or a state, in all of ``span``."""
    if not span or (span[-1] in {"me", "here", "by"} and marked):
        return None  # "near me": nothing to read
    for size in range(min(LONGEST_STATE_NAME, len(span)), 0, -1):
        code = STATE_NAMES.get(tuple(span[-size:]))
        if code is not None:
            city = tuple(span[:-size])
            return (city, code) if _a_city(city, marked) else None
    last_word = span[-1].upper()
    if len(span) > 1 and len(last_word) == 2 and last_word in STATE_CODES:
        city = tuple(span[:-1])
        return (city, last_word) if city and _a_city(city, marked) else None
    if len(span) == 1 and len(last_word) == 2 and last_word in STATE_CODES and last_word != "IN":
        if marked or (last and last_word not in AMBIGUOUS_CODES):
            return (), last_word
        return None
    city = tuple(span)
    return (city, None) if len(city) <= LONGEST_CITY_NAME and _a_city(city, marked) else None


def _a_city(city: tuple[str, ...], marked: bool) -> bool:
    """Whether the words may be a city: any after "in"/"near" (the catalogue decides), else one the
    ZIP list names."""
    if not city:
        return True
    if len(city) > LONGEST_CITY_NAME or not all(word.isalpha() for word in city):
        return False
    return marked or city in city_names()
