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

Measured (docs/benchmarks.md, issue 3): copying 200,000 contacts took 5.1 s with the vector computed
by the server and 2.9 s with it supplied; building it here costs a few microseconds a contact, on the
reader's core.
"""

from __future__ import annotations

import re
import struct

_WORDS = re.compile(r"[^a-z0-9]+")
# PostgreSQL's parser reads a number in scientific notation as one token: "6e3bx" is "6e3" and "bx".
_EXPONENT = re.compile(r"[0-9]e[0-9]")
_WEIGHTS = (3 << 14, 2 << 14, 1 << 14, 0)  # A, B, C, D in a WordEntryPos
_MAX_POSITION = (1 << 14) - 1
_COUNT = struct.Struct("!i")
_SHORT = struct.Struct("!H")


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
    parts = (business_name, specialty or "", license_type or "", f"{industry} {city}")
    if not (all(part.isascii() for part in parts) and state.isascii() and city_key.isascii()):
        return None
    folded = [_WORDS.sub(" ", part.lower()) for part in parts]
    if any(_EXPONENT.search(text) for text in folded):
        return None
    positions: dict[bytes, list[int]] = {}
    offset = 0
    for text, weight in zip(folded, _WEIGHTS, strict=True):
        words = text.split()
        for number, word in enumerate(words, start=offset + 1):
            positions.setdefault(word.encode(), []).append(weight | min(number, _MAX_POSITION))
        offset += len(words)
    filters = (
        "§st" + state.lower(),
        "§in" + industry.replace("-", ""),
        "§ct" + city_key.replace(" ", ""),
    )
    for name in filters:
        positions.setdefault(name.encode(), [])
    out = [_COUNT.pack(len(positions))]
    for lexeme in sorted(positions):
        entry = positions[lexeme]
        out.append(lexeme)
        out.append(b"\0")
        out.append(_SHORT.pack(len(entry)))
        out.extend(_SHORT.pack(position) for position in entry)
    return b"".join(out)


def encode(value: bytes) -> bytes:
    """asyncpg's binary encoder for tsvector on an import's connection: the value is made already."""
    return value


def decode(value: bytes) -> bytes:
    return value
