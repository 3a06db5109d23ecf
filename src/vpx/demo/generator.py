"""A seeded generator of demo contacts: the same seed gives the same catalogue."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

from vpx.demo.data import (
    PLACE_WORDS,
    STATE_PLACES,
    STATE_WEIGHTS,
    STREET_NAMES,
    STREET_TYPES,
    SUFFIXES,
    SURNAMES,
    VERTICAL_TRADES,
)
from vpx.verticals import VERTICALS

# Syllables for made-up family names: a large catalogue needs a vocabulary as varied as a real one
# (tens of thousands of distinct words), not a hundred surnames repeated.
_ONSETS = (
    "b",
    "br",
    "c",
    "ch",
    "d",
    "f",
    "g",
    "gr",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "st",
    "t",
    "v",
    "w",
    "z",
)
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ou", "y")
_CODAS = ("", "n", "r", "s", "l", "m", "rd", "ck", "th", "nd", "ll", "x")


def made_up_surname(rng: random.Random) -> str:
    syllables = rng.choice((2, 2, 3))
    word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables))
    return word.capitalize()


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def demo_contacts(count: int, *, seed: int = 42) -> Iterator[dict[str, Any]]:
    """Contact fields for ``count`` demo businesses, every vertical and every state represented
    once ``count`` is at least 51 × 46 / 46… in practice from a few hundred on."""
    rng = random.Random(seed)
    states = list(STATE_WEIGHTS)
    weights = [STATE_WEIGHTS[s] for s in states]
    for index in range(count):
        # The first rows walk every vertical and every state, so small catalogues cover them all.
        vertical = VERTICALS[index % len(VERTICALS)]
        state = states[index % len(states)] if index < 10 * len(states) else rng.choices(states, weights)[0]
        names, specialties, licences = VERTICAL_TRADES[vertical]
        area_codes, zip_prefix, cities = STATE_PLACES[state]
        trade = rng.choice(names)
        roll = rng.random()
        first = rng.choice(SURNAMES) if roll < 0.4 else made_up_surname(rng) if roll < 0.8 else rng.choice(PLACE_WORDS)
        suffix = rng.choice(SUFFIXES)
        business_name = " ".join(part for part in (first, trade, suffix) if part)
        city = rng.choice(cities)
        domain = _slug(f"{first}{trade}") + f"{index % 1000}.example"
        specialty = rng.choice(specialties)
        licence = rng.choice(licences)
        yield {
            "business_name": business_name,
            "street": f"{rng.randrange(100, 9900)} {rng.choice(STREET_NAMES)} {rng.choice(STREET_TYPES)}",
            "city": city,
            "state": state,
            "postal_code": (zip_prefix + f"{rng.randrange(100000):05d}")[:5],
            # The 555 exchange: no real subscriber's number.
            "phone": f"+1{rng.choice(area_codes)}555{rng.randrange(10000):04d}",
            "email": f"{rng.choice(('info', 'office', 'hello', 'contact'))}@{domain}",
            "website": f"https://www.{domain}",
            "industry": vertical,
            "specialty": specialty,
            "license_type": licence,
            "license_number": f"{state}-{rng.randrange(100000, 1000000)}",
            "license_state": state,
            "record_id": f"demo-{seed}-{index}",
        }
