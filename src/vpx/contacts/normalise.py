"""Normalisation shared by everything that writes contacts: display names, matching keys, phones,
emails and websites."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import phonenumbers

# Legal forms dropped from a name's matching key, so "Acme Plumbing, LLC" matches "ACME PLUMBING".
LEGAL_SUFFIXES = frozenset(
    [
        "llc",
        "l",
        "l",
        "c",
        "inc",
        "incorporated",
        "corp",
        "corporation",
        "co",
        "company",
        "ltd",
        "limited",
        "lp",
        "llp",
        "pllc",
        "pc",
        "pa",
        "plc",
        "professional",
        "association",
        "dds",
        "md",
        "dmd",
        "pllc",
        "ps",
        "sc",
        "lc",
    ]
)
_WORD = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """Lower case without accents: the form every search and matching key starts from."""
    if text.isascii():
        return text.lower()  # the same result, without decomposing (registry imports fold millions)
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


def words(text: str) -> list[str]:
    """The searchable words of a text, as the full-text indexes cut them."""
    return _WORD.findall(fold(text))


def name_key(name: str) -> str:
    """A business name for matching: folded, no punctuation, no trailing legal form."""
    parts = words(name.replace("&", " and "))
    while len(parts) > 1 and parts[-1] in LEGAL_SUFFIXES:
        parts.pop()
    return " ".join(parts)


def text_key(text: str | None) -> str | None:
    if text is None:
        return None
    key = " ".join(words(text))
    return key or None


def clean_display(text: str) -> str:
    """Collapses whitespace; keeps the publisher's spelling otherwise."""
    return " ".join(text.split())


@lru_cache(maxsize=65_536)
def phone_e164(raw: str | None, *, region: str = "US") -> str | None:
    """A valid phone number in E.164 form, or None when it is not one. Cached: validation costs
    ~150 µs a number, and sources repeat the same businesses' phones."""
    if not raw or not raw.strip():
        return None
    try:
        number = phonenumbers.parse(raw, region)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(number):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def email_key(raw: str | None) -> str | None:
    if not raw or "@" not in raw:
        return None
    return raw.strip().lower()


def website_key(raw: str | None) -> str | None:
    """A website as ``https://host/path`` in lower case, or None."""
    if not raw or not raw.strip():
        return None
    text = raw.strip().lower()
    text = re.sub(r"^[a-z]+://", "", text).rstrip("/")
    if "." not in text or " " in text:
        return None
    return "https://" + text


# --- Registry imports: display names, addresses and fast phones (vpx.registries) ---

# Kept in capitals when a registry writes a whole name in capitals.
_UPPER_WORDS = frozenset(
    [
        "llc",
        "llp",
        "pllc",
        "lp",
        "pc",
        "pa",
        "plc",
        "lc",
        "ps",
        "sc",
        "md",
        "dds",
        "dmd",
        "do",
        "dc",
        "od",
        "dpm",
        "np",
        "rn",
        "lpn",
        "cpa",
        "pt",
        "ot",
        "dvm",
        "phd",
        "psyd",
        "lcsw",
        "lpc",
        "mft",
        "pa-c",
        "aprn",
        "crna",
        "fnp",
        "usa",
        "us",
        "ii",
        "iii",
        "iv",
        "vi",
        "hvac",
        "tv",
        "ne",
        "nw",
        "se",
        "sw",
    ]
)
_UPPER_WORDS |= frozenset(["ceo", "cfo", "coo", "cto", "cmo", "cio", "cno", "evp", "svp", "vp", "avp"])
# Abbreviations without vowels that are words, not acronyms.
_TITLE_WORDS = frozenset(
    [
        "st",
        "rd",
        "dr",
        "ct",
        "pl",
        "sq",
        "blvd",
        "pkwy",
        "hwy",
        "ln",
        "cir",
        "trl",
        "ste",
        "jr",
        "sr",
        "mt",
        "ft",
        "bldg",
        "ctr",
        "dept",
        "mgmt",
        "svcs",
        "hlth",
    ]
)
_SMALL_WORDS = frozenset(
    ["and", "of", "the", "for", "at", "in", "on", "by", "to", "a", "an", "de", "del", "la", "los", "y", "or"]
)
_VOWELS = frozenset("aeiouy")


@lru_cache(maxsize=1 << 16)
def _cased_word(word: str, first: bool) -> str:
    lower = word.lower()
    if lower in _UPPER_WORDS:
        return word.upper()
    letters = [ch for ch in lower if ch.isalpha()]
    if any(ch.isdigit() for ch in lower):
        return lower  # 2nd, 4th, 53-59
    if len(letters) <= 1:
        return word.upper()  # an initial
    if lower in _SMALL_WORDS and not first:
        return lower
    if not _VOWELS.intersection(letters) and len(letters) <= 4 and lower not in _TITLE_WORDS:
        return word.upper()  # an acronym: CBS, NSG, JRM
    parts = re.split(r"([-/.])", lower)
    out = []
    for part in parts:
        if part in _UPPER_WORDS:
            part = part.upper()
        elif part and part[0].isalpha():
            part = part[0].upper() + part[1:]
            if part.startswith("Mc") and len(part) > 3:
                part = "Mc" + part[2].upper() + part[3:]
            if "'" in part:
                head, _, tail = part.partition("'")
                # O'Brien, D'Angelo; but Crespo's
                part = head + "'" + (tail[:1].upper() + tail[1:] if len(head) == 1 and len(tail) > 1 else tail)
        out.append(part)
    return "".join(out)


@lru_cache(maxsize=1 << 16)
def display_name(text: str) -> str:
    """A name fit to show: whitespace collapsed and, when the registry wrote it all in capitals,
    title case that keeps legal forms, credentials and acronyms in capitals."""
    parts = text.split()
    if not parts:
        return ""
    text = " ".join(parts)
    if text.upper() != text:
        return text  # it has lower-case letters: the publisher's own spelling
    return " ".join([_cased_word(parts[0], True), *[_cased_word(word, False) for word in parts[1:]]])


def person_display_name(
    first: str, middle: str, last: str, *, prefix: str = "", suffix: str = "", credential: str = ""
) -> str:
    """``First Middle Last Suffix, Credential`` (the prefix, "DR." or "MR.", is left out)."""
    parts = [part for part in (first, middle, last, suffix) if part and part.strip()]
    if all(part.upper() == part for part in parts):
        # All in capitals (as registries write them): ``display_name`` of the whole, part by part,
        # each part from a cache (first and last names repeat where whole names do not).
        name = " ".join([_cased_part(part, index == 0) for index, part in enumerate(parts)])
    else:
        name = display_name(" ".join(parts))
    if credential:
        credential = " ".join(credential.split())
    return f"{name}, {credential}" if name and credential else name


@lru_cache(maxsize=1 << 16)
def _cased_part(part: str, first: bool) -> str:
    head, *rest = part.split()
    return " ".join([_cased_word(head, first), *[_cased_word(word, False) for word in rest]])


def person_name_and_key(first: str, middle: str, last: str, suffix: str = "", credential: str = "") -> tuple[str, str]:
    """``(name, name_key(name))`` for ``name = person_display_name(first, middle, last, suffix=…,
    credential=…)``, part by part from caches: whole names rarely repeat in a registry, their parts
    do. Parts in ASCII capitals (as registries write them) are cased and cut into words one at a
    time — in ASCII, the words of parts joined by spaces and commas are the parts' words end to end;
    any other name goes through the two functions themselves."""
    parts = [part for part in (first, middle, last, suffix) if part and part.strip()]
    shown: list[str] = []
    keys: list[str] = []
    for index, part in enumerate(parts):
        cased = _capitals_part(part, index == 0)
        if cased is None:
            break
        shown.append(cased[0])
        keys += cased[1]
    else:
        given = _credential(credential) if credential else ("", ())
        if shown and given is not None:
            name = " ".join(shown)
            if given[0]:
                name = f"{name}, {given[0]}"
                keys += given[1]
            while len(keys) > 1 and keys[-1] in LEGAL_SUFFIXES:
                keys.pop()
            return name, " ".join(keys)
    name = person_display_name(first, middle, last, suffix=suffix, credential=credential)
    return name, name_key(name)


@lru_cache(maxsize=1 << 16)
def _capitals_part(part: str, first: bool) -> tuple[str, tuple[str, ...]] | None:
    # A name part as person_display_name shows it and its words as name_key cuts them (after "&"
    # becomes " and "); None unless it is ASCII in capitals.
    if not part.isascii() or part.upper() != part:
        return None
    shown = _cased_part(part, first)
    return shown, tuple(words(shown.replace("&", " and ")))


@lru_cache(maxsize=1 << 12)
def _credential(credential: str) -> tuple[str, tuple[str, ...]] | None:
    # As person_display_name shows a credential (whitespace collapsed) and its words; None unless ASCII.
    if not credential.isascii():
        return None
    shown = " ".join(credential.split())
    return shown, tuple(words(shown.replace("&", " and ")))


_STREET_WORDS = {
    "street": "st", "avenue": "ave", "av": "ave", "road": "rd", "boulevard": "blvd", "drive": "dr",
    "lane": "ln", "court": "ct", "place": "pl", "parkway": "pkwy", "highway": "hwy", "circle": "cir",
    "square": "sq", "terrace": "ter", "trail": "trl", "north": "n", "south": "s", "east": "e", "west": "w",
    "northeast": "ne", "northwest": "nw", "southeast": "se", "southwest": "sw", "suite": "ste",
}  # fmt: skip
_UNIT_WORDS = frozenset(["ste", "unit", "apt", "fl", "floor", "bldg", "building", "rm", "room", "ms", "po"])


def display_street(line1: str, line2: str) -> str:
    """``display_name(line1 + " " + line2)``, the street and house number of an address. House
    numbers make nearly every street line unique, while the rest of the line repeats (the street
    itself): the rest is shown from a cache and the house number put in front. ``display_name``
    works word by word, the first word apart (cased as a first word); a first word in ASCII has no
    case mapping that changes its length, so "all in capitals" holds of the line exactly when it
    holds of that word and of the rest."""
    text = line1 + " " + line2
    split = text.split(None, 1)
    if len(split) < 2 or not split[0].isascii():
        return display_name(text)
    number, rest = split
    capitals, cased, plain = _street_rest(rest)
    if capitals and number.upper() == number:
        return _cased_word(number, True) + " " + cased
    return number + " " + plain


@lru_cache(maxsize=1 << 16)
def _street_rest(rest: str) -> tuple[bool, str, str]:
    # (all in capitals, as display_name cases words after the first, whitespace collapsed)
    parts = rest.split()
    plain = " ".join(parts)
    return plain.upper() == plain, " ".join([_cased_word(word, False) for word in parts]), plain


def street_key(street: str | None) -> str | None:
    """A street line for matching: folded words, usual abbreviations, the suite or unit cut off."""
    if not street:
        return None
    out: list[str] = []
    for word in words(street.replace("#", " ste ")):
        word = _STREET_WORDS.get(word, word)
        if word in _UNIT_WORDS and out:
            break
        out.append(word)
    return " ".join(out) or None


def postal_code(raw: str | None) -> str | None:
    """A US ZIP as ``12345`` or ``12345-6789``; None when it is neither."""
    if not raw:
        return None
    digits = raw if raw.isascii() and raw.isdigit() else "".join(ch for ch in raw if "0" <= ch <= "9")
    if len(digits) == 9:
        return f"{digits[:5]}-{digits[5:]}"
    if len(digits) == 5:
        return digits
    return None


def block_token(name_key: str) -> str:
    """The word entity resolution blocks on: the first word of the matching key after a leading
    "the" (the ``ix_contacts_block`` index computes the same in SQL)."""
    if name_key.startswith("the "):
        name_key = name_key[4:]
    return name_key.split(" ", 1)[0]


_US_METADATA = phonenumbers.PhoneMetadata.metadata_for_region("US")
assert _US_METADATA is not None and _US_METADATA.fixed_line is not None
# A US number's ten digits (fixed line and mobile share the pattern in phonenumbers' metadata).
_US_NUMBER = re.compile(str(_US_METADATA.fixed_line.national_number_pattern))
_SEPARATORS = str.maketrans("", "", " -().")


def fast_phone_e164(raw: str | None) -> str | None:
    """``phone_e164`` with a shortcut for US numbers: the bare ten digits registries publish, or
    written with the usual separators ("(303) 555-0100", "+1 303 555 0100", "1-303-555-0100"), the
    ten digits checked against phonenumbers' own US pattern, which is what ``is_valid_number``
    decides for them. Validation costs ~75 µs a number and registry and signal phones are mostly
    distinct, so the cache behind ``phone_e164`` rarely helps (not cached itself: a cache miss cost
    more than the shortcut). Anything else (other countries, extensions, letters) goes through
    phonenumbers; tests hold the two to the same answers."""
    if raw is None:
        return None
    if len(raw) == 10 and raw.isascii() and raw.isdigit():
        return "+1" + raw if _US_NUMBER.fullmatch(raw) else phone_e164(raw)
    text = raw.strip()
    international = text.startswith("+")
    digits = (text[1:] if international else text).translate(_SEPARATORS)
    if digits.isascii() and digits.isdigit():
        # "+1…" is the country code; a bare leading 1 is the US trunk prefix phonenumbers strips.
        if len(digits) == 11 and digits[0] == "1":
            digits = digits[1:]
        elif international:
            digits = ""
        if len(digits) == 10 and _US_NUMBER.fullmatch(digits):
            return "+1" + digits
    return phone_e164(raw)
