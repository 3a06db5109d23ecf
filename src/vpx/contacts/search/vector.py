"""PostgreSQL's search vector of a contact, made by the client: the value the database's own
definition (``vpx_contact_vector``, migration 20261124_search_vector_input) gives, for the contacts a
bulk import writes, so that the server does not compute it row by row.

The definition folds five fields (``vpx_fold``: accents off, lower case), turns every run of
non-alphanumerics into a space, and weighs the words: A the business name, B the specialty, C the
licence type, D the industry and city; then adds three filter lexemes without positions (``§st…``,
``§in…``, ``§ct…``). In ASCII that is exactly: lower case, ``[^a-z0-9]+`` to a space, the words in
order, positions counted on across the four parts (tsvector ``||`` shifts the right side by the
left side's largest position). A contact with any other character is left to the database (None):
unaccent's rules and the parser's idea of a letter are the server's to apply. A test holds this
to the definition on generated text.

Measured (docs/benchmarks.md): copying 200,000 contacts took 5.1 s with the vector computed
by the server and 2.9 s with it supplied; building it here costs a few microseconds a contact, on the
reader's core.
"""

from __future__ import annotations

import re
import struct
from functools import lru_cache

_WORDS = re.compile(r"[^a-z0-9]+")
# PostgreSQL's parser reads a number in scientific notation as one token: "6e3bx" is "6e3" and "bx".
_EXPONENT = re.compile(r"[0-9]e[0-9]")
_A, _B, _C, _D = 3 << 14, 2 << 14, 1 << 14, 0  # weights in a WordEntryPos
# A lexeme has at most 256 positions in a tsvector (the server drops the rest); a contact with
# that many words is left to the server rather than copied here.
_MOST_WORDS = 255
_COUNT = struct.Struct("!i")
_ENTRIES = [struct.Struct(f"!{count + 1}H") for count in range(16)]  # npos, then the positions


def _words(text: str) -> tuple[str, ...] | None:
    """The words the definition cuts ASCII text into; None when the server must do it."""
    if not text.isascii():
        return None
    folded = _WORDS.sub(" ", text.lower())
    if _EXPONENT.search(folded):
        return None
    return tuple(folded.split())


@lru_cache(maxsize=1 << 14)
def _rest(
    specialty: str | None, license_type: str | None, industry: str, city: str, state: str, city_key: str
) -> tuple[tuple[tuple[str, ...], ...], bytes, int] | None:
    """What a contact's vector takes from its other fields than the name, which repeat from contact
    to contact: the B, C and D words, and the filter lexemes already encoded."""
    parts = [_words(specialty or ""), _words(license_type or ""), _words(f"{industry} {city}")]
    if not (state.isascii() and city_key.isascii()):
        return None
    words = tuple(part for part in parts if part is not None)
    if len(words) < 3:
        return None
    # Lexemes of their own (no query word can spell "§"), without positions: after every ASCII word.
    filters = sorted({"§st" + state.lower(), "§in" + industry.replace("-", ""), "§ct" + city_key.replace(" ", "")})
    # Each: the lexeme, its terminating NUL, and a count of no positions.
    return words, b"".join(name.encode() + b"\0" + _ENTRIES[0].pack(0) for name in filters), len(filters)


def contact_vector(
    business_name: str,
    specialty: str | None,
    license_type: str | None,
    industry: str,
    city: str,
    state: str,
    city_key: str,
) -> bytes | None:
    """The contact's vector in PostgreSQL's binary form (tsvector_recv), or None when the server
    must compute it (a character outside ASCII, or what the parser may read as a number in
    scientific notation)."""
    rest = _rest(specialty, license_type, industry, city, state, city_key)
    name = _words(business_name)
    if rest is None or name is None:
        return None
    words, filters, filter_count = rest
    positions: dict[str, list[int]] = {}
    number = 0
    for weight, part in ((_A, name), (_B, words[0]), (_C, words[1]), (_D, words[2])):
        for word in part:
            number += 1
            entry = positions.get(word)
            position = weight | number
            if entry is None:
                positions[word] = [position]
            else:
                entry.append(position)
    if number > _MOST_WORDS:
        return None
    out = [_COUNT.pack(len(positions) + filter_count)]
    for word in sorted(positions):  # ASCII: the order of their bytes, PostgreSQL's order
        entry = positions[word]
        count = len(entry)
        packer = _ENTRIES[count] if count < len(_ENTRIES) else struct.Struct(f"!{count + 1}H")
        out.append(word.encode() + b"\0" + packer.pack(count, *entry))
    out.append(filters)
    return b"".join(out)


def encode(value: bytes) -> bytes:
    """asyncpg's binary encoder for tsvector on an import's connection: the value is made already."""
    return value


def decode(value: bytes) -> bytes:
    return value
