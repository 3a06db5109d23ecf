"""A seeded generator of demo contacts: the same seed gives the same catalogue.

Every record agrees with itself: its trade gives the word in its name, its specialty and its licence
class (a "Plumbing" business is a plumber with a plumbing licence: C-36 in California); its city
gives its phone's area code and its ZIP code's first three digits; its licence number has the format
of the board that issued it. Phones are on the fictional 555 exchange, websites and emails on
``.example`` domains: no real business, subscriber or mailbox is named.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

from vpx.demo.data import (
    COMPANY_SUFFIXES,
    CONTRACTOR_CLASSES,
    CONTRACTOR_NUMBER_FORMATS,
    DEFAULT_NUMBER_FORMAT,
    PLACE_NAMED_VERTICALS,
    PLACE_WORDS,
    PROFESSIONAL_SUFFIXES,
    PROFESSIONAL_VERTICALS,
    STREET_NAMES,
    STREET_TYPES,
    SURNAMES,
    VERTICAL_TRADES,
    Trade,
)
from vpx.demo.places import STATE_CITIES, STATE_WEIGHTS
from vpx.verticals import VERTICALS

# Family names. The first REAL_NAMED_ROWS rows (the demo's own 12,000 by default) are named after common
# US family names (data.SURNAMES) or a place word. A large catalogue needs a vocabulary as varied as a
# real one (hundreds of thousands of distinct words at a million rows, which search's typo corrections
# and postings are measured on), not a thousand names repeated: beyond those rows, two names in five are
# made up, built the way English family names are (a syllable and an ending: Hurnley, Crackwell,
# Tarston), so that they can be read aloud; no ending a trade's words have (-er, -ers, -ing), so that
# none is a typo away from "plumbers", "tiler" or "roofing".
REAL_NAMED_ROWS = 20_000
MADE_UP_SHARE = 0.4
PLACE_SHARE = 0.2
_ONSETS = (
    "b", "bl", "br", "c", "ch", "cl", "cr", "d", "dr", "f", "fl", "fr", "g", "gl", "gr", "h", "k", "l", "m", "n", "p",
    "pl", "pr", "r", "s", "sc", "sh", "sk", "sl", "sp", "st", "sw", "t", "th", "tr", "tw", "v", "w", "wh", "y",
)  # fmt: skip
_VOWELS = ("a", "e", "i", "o", "u")
_CODAS = (
    "l", "n", "r", "s", "t", "d", "m", "ck", "ll", "nd", "rn", "rt", "st", "ld", "nt", "lt", "mp", "nk", "rd", "rk",
    "ss", "sh", "th",
)  # fmt: skip
_LINKS = ("d", "l", "m", "n", "r", "t", "v")  # a consonant between two syllables
_ENDINGS = (
    "son", "ton", "ley", "ford", "well", "more", "wood", "field", "by", "man", "ridge", "worth", "ham", "stead",
    "wick", "land", "bury", "dale", "ston", "cott", "ell", "ett", "ington", "ard", "en", "ey", "mond", "ney", "shaw",
    "way", "win", "kins", "lin", "low", "nell", "rick", "sey", "wright", "den", "don", "gate", "hurst", "lock", "ins",
    "ay", "ette", "ly", "dell", "ville", "brook", "croft", "hill", "holt", "erton", "combe", "haven", "beck",
)  # fmt: skip
# Serial numbers are spread by multiplying with a constant prime to 2, 3 and 5: distinct rows get distinct
# numbers (until the format runs out of them) that do not look sequential.
_SPREAD = 2_654_435_761


def made_up_surname(rng: random.Random) -> str:
    """A made-up family name that reads like one: a consonant cluster words begin with, a vowel, then
    one words end with or (one time in four) a short second syllable, and an ending of English family
    names; never more than three consonants together, nor three of one letter."""
    ending = rng.choice(_ENDINGS)
    head = len(ending) - len(ending.lstrip("bcdfghklmnprstvwy"))  # the ending's leading consonants
    stem = rng.choice(_ONSETS) + rng.choice(_VOWELS)
    if rng.random() < 0.25:
        stem += rng.choice(_LINKS) + rng.choice(_VOWELS[:4])
        return (stem + (rng.choice(_LINKS) if not head else "") + ending).capitalize()
    codas = [
        coda
        for coda in _CODAS
        if len(coda) + head <= 3
        and not (len(coda) == 2 and ending[0] in coda)  # no "lll", "shs" or "tht"
        and not (coda[-1] in "ck" and ending[0] in "ck")
    ]
    return (stem + rng.choice(codas) + ending).capitalize()


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def licence_class(licence: str, state: str) -> tuple[str, str]:
    """A trade's licence as ``state`` names it, and the format of its numbers ("#" a digit, "{ST}" the
    state). ``licence`` is a licence type, or ``@kind`` for a contractor class (data.CONTRACTOR_CLASSES)."""
    if not licence.startswith("@"):
        return licence, DEFAULT_NUMBER_FORMAT
    classes = CONTRACTOR_CLASSES[licence[1:]]
    name, number_format = classes.get(state, classes["*"])
    return name, number_format or CONTRACTOR_NUMBER_FORMATS.get(state, DEFAULT_NUMBER_FORMAT)


def licence_number(number_format: str, state: str, serial: int) -> str:
    """A number in the board's format; distinct serials give distinct numbers, never with a leading 0."""
    digits = number_format.count("#")
    value = str(10 ** (digits - 1) + (serial * _SPREAD) % (9 * 10 ** (digits - 1)))
    filled = iter(value)
    return "".join(next(filled) if char == "#" else char for char in number_format).replace("{ST}", state)


def _business_name(rng: random.Random, vertical: str, trade: Trade, city: str, *, made_up: bool) -> tuple[str, str]:
    """The business's name and the words its web domain is made of; ``made_up``: its family name may be
    a made-up one."""
    word = rng.choice(trade.names)
    if vertical in PLACE_NAMED_VERTICALS:
        first = city if vertical == "government" else rng.choice((*PLACE_WORDS, city))
        return f"{first} {word}", f"{first}{word}"
    roll = rng.random()
    if roll < PLACE_SHARE:
        first = rng.choice(PLACE_WORDS)
    elif made_up and roll < PLACE_SHARE + MADE_UP_SHARE:
        first = made_up_surname(rng)
    else:
        first = rng.choice(SURNAMES)
    suffix = rng.choice(PROFESSIONAL_SUFFIXES if vertical in PROFESSIONAL_VERTICALS else COMPANY_SUFFIXES)
    return " ".join(part for part in (first, word, suffix) if part), f"{first}{word}"


def demo_contacts(count: int, *, seed: int = 42) -> Iterator[dict[str, Any]]:
    """Contact fields for ``count`` demo businesses. Even rows give every vertical every state in turn,
    biggest state first, each vertical taking its next trade in each state (the first thousand rows hold
    a plumber in California, a dentist in Texas); odd rows visit every state ten times, then follow the
    states' population. Small catalogues so cover every vertical, state and trade."""
    rng = random.Random(seed)
    states = list(STATE_WEIGHTS)  # biggest first
    cumulative = list(accumulate(STATE_WEIGHTS[s] for s in states))
    per_area_code: dict[str, int] = {}
    for index in range(count):
        half, odd = divmod(index, 2)
        turn, number = divmod(half, len(VERTICALS))
        vertical = VERTICALS[number]
        trades = VERTICAL_TRADES[vertical]
        if not odd and turn < len(states):
            state, trade = states[turn], trades[turn % len(trades)]
        elif odd and half < 10 * len(states):
            state, trade = states[half % len(states)], rng.choice(trades)
        else:
            state, trade = rng.choices(states, cum_weights=cumulative)[0], rng.choice(trades)
        city = rng.choice(STATE_CITIES[state])
        business_name, domain_words = _business_name(rng, vertical, trade, city.name, made_up=index >= REAL_NAMED_ROWS)
        domain = f"{_slug(domain_words)}{index}.example"
        area_code = rng.choice(city.area_codes)
        # The 555 exchange: no real subscriber's number; each number of an area code used once (up to 10,000).
        line = per_area_code[area_code] = per_area_code.get(area_code, int(area_code) * 37 + seed) + 1
        licence, number_format = licence_class(rng.choice(trade.licences), state)
        yield {
            "business_name": business_name,
            "street": f"{rng.randrange(100, 9900)} {rng.choice(STREET_NAMES)} {rng.choice(STREET_TYPES)}",
            "city": city.name,
            "state": state,
            "postal_code": f"{rng.choice(city.zip_prefixes)}{rng.randrange(1, 100):02d}",
            "phone": f"+1{area_code}555{(line * 7919) % 10_000:04d}",
            "email": f"{rng.choice(('info', 'office', 'hello', 'contact'))}@{domain}",
            "website": f"https://www.{domain}",
            "industry": vertical,
            "specialty": trade.specialty,
            "license_type": licence,
            "license_number": licence_number(number_format, state, index + seed),
            "license_state": state,
            "record_id": f"demo-{seed}-{index}",
        }
