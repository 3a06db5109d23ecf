"""The demo catalogue agrees with itself: over the whole default catalogue (12,000 businesses), each
record's name word, specialty and licence class are one trade's; its phone's area code and its ZIP
code belong to its city; its licence number has its board's format; its addresses are fictional.

The expectations about trades, licence classes and places are written out here again, from the
boards' and the numbering plans' own tables, rather than read back from the generator's."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from vpx.contacts.search.language import stem
from vpx.contacts.search.vocabulary import built_in
from vpx.demo.data import PLACE_NAMED_VERTICALS, PLACE_WORDS, SURNAMES, VERTICAL_TRADES
from vpx.demo.generator import REAL_NAMED_ROWS, demo_contacts
from vpx.demo.places import STATE_CITIES
from vpx.verticals import VERTICALS

# Contractor trades: words the licence class must contain, and its class in California (the CSLB's).
CONTRACTOR_TRADES = {
    "Plumbing": (("plumb",), "C-36"),
    "HVAC": (("hvac", "air conditioning"), "C-20"),
    "Electrical": (("electric",), "C-10"),
    "Roofing": (("roofing",), "C-39"),
    "Landscaping": (("landscap",), "C-27"),
    "Pool Service": (("pool",), "C-53"),
    "Pest Control": (("pest",), "Branch 2"),  # California licenses it by its pest board, not the CSLB
    "Residential Solar Installation": (("solar",), "C-46"),
    "Commercial Solar": (("solar",), "C-46"),
    "Battery Storage": (("solar",), "C-46"),
    "Solar Maintenance": (("solar",), "C-46"),
    "Fiber Installation": (("low voltage",), "C-7"),
    "Business Phone Systems": (("low voltage",), "C-7"),
    "Cable Installation": (("low voltage",), "C-7"),
    "Network Installation": (("low voltage",), "C-7"),
    "General Building": (("general",), "B"),
    "Commercial Construction": (("general",), "B"),
    "Concrete": (("concrete",), "C-8"),
    "Framing": (("framing",), "C-5"),
    "Painting": (("painting",), "C-33"),
    "Flooring": (("flooring",), "C-15"),
    "Asbestos Abatement": (("asbestos",), "C-22"),
}
# Home-services trades and a word their business names must carry.
HOME_SERVICE_NAMES = {
    "Plumbing": ("Plumbing",),
    "HVAC": ("Heating", "HVAC"),
    "Electrical": ("Electric",),
    "Roofing": ("Roofing",),
    "Landscaping": ("Landscap",),
    "Pest Control": ("Pest", "Exterminating"),
    "Pool Service": ("Pool",),
}
# Licence numbers: the boards with formats of their own, else the state's code and six digits.
BOARD_NUMBERS = re.compile(r"^(\d{7}|PR \d{4}|ROC\d{6}|M-\d{5}|TACLA\d{5}C|TECL\d{5}|C[A-Z]C\d{5,7}|EC\d{8})$")
# A few cities checked against the numbering plan and the USPS, independently of the table.
KNOWN_PLACES = {
    ("CA", "Fresno"): ("559", "937"),
    ("CA", "San Francisco"): ("415", "941"),
    ("CO", "Denver"): ("303", "802"),
    ("TX", "Houston"): ("713", "770"),
    ("NY", "New York"): ("212", "100"),
    ("IL", "Chicago"): ("312", "606"),
    ("FL", "Miami"): ("305", "331"),
    ("WA", "Seattle"): ("206", "981"),
    ("MA", "Boston"): ("617", "021"),
    ("GA", "Atlanta"): ("404", "303"),
}
PROFESSIONAL_SUFFIXES = ("PLLC", "PC", "PA")
# What a family name that reads like an English one is made of: consonants that English words begin
# and end with, vowels alone or in the usual pairs, a few syllables; no j, q, x or z.
WORD_ONSETS = {
    "", "b", "bl", "br", "c", "ch", "cl", "cr", "d", "dr", "f", "fl", "fr", "g", "gl", "gr", "h", "k", "kn", "l", "m",
    "n", "p", "ph", "pl", "pr", "r", "s", "sc", "sh", "sk", "sl", "sm", "sn", "sp", "st", "str", "sw", "t", "th", "tr",
    "tw", "v", "w", "wh", "wr", "y",
}  # fmt: skip
WORD_CODAS = {
    "", "b", "ck", "d", "f", "ft", "g", "k", "l", "ld", "lf", "lk", "ll", "lm", "lp", "lt", "m", "mb", "mp", "n", "nd",
    "ng", "ngs", "nk", "ns", "nt", "p", "r", "rd", "rk", "rl", "rm", "rn", "rs", "rst", "rt", "s", "sh", "sk", "sp",
    "ss", "st", "t", "th", "tt", "w", "ght", "rth",
}  # fmt: skip
VOWEL_GROUPS = {"a", "e", "i", "o", "u", "y", "ai", "ay", "ea", "ee", "ey", "ie", "oa", "oo", "ou", "oy"}


@pytest.fixture(scope="module")
def catalogue() -> list[dict[str, Any]]:
    return list(demo_contacts(12_000, seed=42))


def _trade(record: dict[str, Any]) -> Any:
    [trade] = [t for t in VERTICAL_TRADES[record["industry"]] if t.specialty == record["specialty"]]
    return trade


def test_every_record_has_one_trade_in_its_name_specialty_and_licence(catalogue: list[dict[str, Any]]) -> None:
    for record in catalogue:
        trade = _trade(record)
        name, licence = record["business_name"], record["license_type"]
        matches = [word for word in trade.names if re.search(rf"\b{re.escape(word)}\b", name)]
        assert matches, record
        own = max(matches, key=len)
        # Nothing in the rest of the name that another trade of the vertical goes by: no "Plumbing" roofer.
        rest = name.replace(own, " ")
        others = {w for t in VERTICAL_TRADES[record["industry"]] if t is not trade for w in t.names} - set(trade.names)
        assert not [w for w in others if re.search(rf"\b{re.escape(w)}\b", rest)], record
        if trade.specialty in CONTRACTOR_TRADES:
            words, cslb_class = CONTRACTOR_TRADES[trade.specialty]
            assert any(word in licence.lower() for word in words), record
            if record["state"] == "CA":
                assert licence.startswith(f"{cslb_class} "), record
            else:
                assert not re.match(r"^(B|C-\d+) ", licence), record  # California's classes stay in California
        else:
            assert licence in trade.licences, record
        if record["industry"] == "home-services":
            assert any(word in name for word in HOME_SERVICE_NAMES[trade.specialty]), record
        assert record["license_state"] == record["state"]
        if name.endswith(PROFESSIONAL_SUFFIXES):
            assert record["industry"] in {"accounting", "dental", "engineering", "healthcare", "legal",
                                          "mental-health", "veterinary"}, record  # fmt: skip


def reads_as_a_name(name: str) -> bool:
    """Whether a made-up family name can be read aloud: its consonant runs are ones English words begin
    with, end with, or an ending and a beginning together (three letters at most); its vowels alone or
    in the usual pairs; at most four syllables."""
    word = name.lower()
    if not re.fullmatch(r"[a-z]{4,14}", word) or set(word) & set("jqxz"):
        return False
    parts = re.split(r"(^[aeiou]+|(?<=.)[aeiouy]+)", word)  # consonant runs and vowel groups in turn
    consonants, vowels = parts[0::2], parts[1::2]
    if len(vowels) > 4 or any(group not in VOWEL_GROUPS for group in vowels):
        return False
    first, *middle, last = consonants
    return first in WORD_ONSETS and last in WORD_CODAS and all(len(run) <= 3 and _splits(run) for run in middle)


def _splits(run: str) -> bool:
    """Whether a run of consonants is how a syllable may end and the next begin."""
    return any(run[:i] in WORD_CODAS and run[i:] in WORD_ONSETS for i in range(len(run) + 1))


def _family_name(record: dict[str, Any]) -> str | None:
    """The family name a business is named after (None for a place-named one)."""
    first = record["business_name"].split()[0]
    return None if record["industry"] in PLACE_NAMED_VERTICALS or first in PLACE_WORDS else first


def test_family_names_are_common_ones_and_made_up_ones_read_as_names(catalogue: list[dict[str, Any]]) -> None:
    # Common US family names (a few hundred), none a word people use for a trade (no "Baker Plumbing"
    # that a search for bakers finds) and none a city of the demo (no "Austin Plumbing" in Dallas).
    vocabulary = built_in()
    cities = {city.name for listed in STATE_CITIES.values() for city in listed}
    assert len(set(SURNAMES)) == len(SURNAMES) >= 300
    # A word of a longer phrase ("fender bender", "green card") is no trade word alone; "roach" is a
    # question word the activity rules read as pest control, while a business named Roach is found by its
    # name first (names stay names) and never by a search for pest control.
    trade_words = [n for n in SURNAMES if stem(n.lower()) in vocabulary._alone and n != "Roach"]
    assert not [n for n in SURNAMES if n in trade_words or n in cities or n in PLACE_WORDS]
    # The demo's catalogue (12,000 by default) is named after them alone, many of them.
    assert len(catalogue) <= REAL_NAMED_ROWS
    names = [name for record in catalogue if (name := _family_name(record))]
    assert set(names) <= set(SURNAMES) and len(set(names)) > 0.9 * len(SURNAMES)
    # Beyond, two in five made up, so that a large catalogue's vocabulary is as varied as a real one's;
    # every one of them reads as a name.
    assert not [n for n in ("Stulljouszeal", "Wucknealljy", "Pondgrird") if reads_as_a_name(n)]
    later = list(demo_contacts(REAL_NAMED_ROWS + 10_000, seed=42))[REAL_NAMED_ROWS:]
    made_up = [name for record in later if (name := _family_name(record)) and name not in SURNAMES]
    assert 0.3 * len(later) < len(made_up) < 0.5 * len(later)
    assert [name for name in made_up if not reads_as_a_name(name)] == []
    assert len(set(made_up)) > 0.9 * len(made_up)


def test_every_phone_and_zip_code_belongs_to_the_city(catalogue: list[dict[str, Any]]) -> None:
    cities = {(state, city.name): city for state, listed in STATE_CITIES.items() for city in listed}
    for record in catalogue:
        city = cities[(record["state"], record["city"])]
        phone, postal_code = record["phone"], record["postal_code"]
        assert re.fullmatch(r"\+1\d{3}555\d{4}", phone), record  # the fictional 555 exchange
        assert phone[2:5] in city.area_codes, record
        assert re.fullmatch(r"\d{5}", postal_code) and postal_code[:3] in city.zip_prefixes, record
    for (state, name), (area_code, zip_prefix) in KNOWN_PLACES.items():
        assert area_code in cities[(state, name)].area_codes and zip_prefix in cities[(state, name)].zip_prefixes
    # Orange County's 714 serves none of the listed California cities.
    assert all("714" not in city.area_codes for city in STATE_CITIES["CA"])


def test_licence_numbers_have_their_boards_format(catalogue: list[dict[str, Any]]) -> None:
    for record in catalogue:
        number, state = record["license_number"], record["state"]
        assert re.fullmatch(rf"{state}-\d{{6}}", number) or BOARD_NUMBERS.match(number), record
        if state == "CA" and record["license_type"].startswith(("B ", "C-")):
            assert re.fullmatch(r"\d{7}", number), record  # the CSLB's numbers
        if state == "FL" and record["license_type"] == "Certified Plumbing Contractor":
            assert re.fullmatch(r"CFC\d{7}", number), record
    keys = Counter((r["license_state"], r["license_type"], r["license_number"]) for r in catalogue)
    assert keys.most_common(1)[0][1] == 1  # a licence identifies one business


def test_websites_emails_and_phones_are_fictional_and_distinct(catalogue: list[dict[str, Any]]) -> None:
    for record in catalogue:
        domain = record["website"].removeprefix("https://www.")
        assert domain.endswith(".example") and record["email"].endswith(f"@{domain}"), record
    assert len({r["phone"] for r in catalogue}) == len(catalogue)
    assert len({r["website"] for r in catalogue}) == len(catalogue)


def test_small_catalogues_cover_every_vertical_state_and_trade() -> None:
    records = list(demo_contacts(2 * len(VERTICALS) * len(STATE_CITIES), seed=3))
    assert {(r["industry"], r["state"]) for r in records} == {(v, s) for v in VERTICALS for s in STATE_CITIES}
    smallest = list(demo_contacts(1000, seed=3))  # the smallest `vpx demo`
    assert {r["state"] for r in smallest} == set(STATE_CITIES) and {r["industry"] for r in smallest} == set(VERTICALS)
    for vertical, trades in VERTICAL_TRADES.items():
        assert {r["specialty"] for r in smallest if r["industry"] == vertical} == {t.specialty for t in trades}
    # The README tour's examples: a plumber in California, home-services businesses in Texas.
    assert any(r["license_type"] == "C-36 Plumbing Contractor" for r in smallest)
    assert any(r["industry"] == "home-services" and r["state"] == "TX" for r in smallest)


def test_the_same_seed_gives_the_same_catalogue() -> None:
    assert list(demo_contacts(300, seed=9)) == list(demo_contacts(300, seed=9))
    assert list(demo_contacts(300, seed=9)) != list(demo_contacts(300, seed=10))
