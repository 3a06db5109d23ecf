"""SQLite's parts of search: the vocabulary's trigram FTS5 table for typo corrections, rows by id."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import text

from vpx.contacts.search.engine import BaseBackend, Reader
from vpx.models import Contact


def _quote(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


_PREVIEW = (
    "contacts.id, contacts.business_name, contacts.city, contacts.state, contacts.industry, contacts.intent_level, "
    "contacts.email, contacts.email_status, contacts.phone, contacts.website, contacts.street, contacts.bad_fields"
)
_HAS_PREFIX = text("SELECT 1 FROM search_terms WHERE term >= :low AND term < :high LIMIT 1")
# Candidates that share two trigrams with the word, unranked (ranking every word with a common
# trigram cost half a second at a million contacts' vocabulary).
_SIMILAR = text("SELECT term FROM search_terms_trgm WHERE search_terms_trgm MATCH :match LIMIT 500")
_KNOWN = text("SELECT term FROM search_terms WHERE term IN (SELECT value FROM json_each(:words))")
# One parameter whatever the number of ids (a JSON array), so that one prepared statement serves.
_ROWS_BY_ID = text(
    f"SELECT {_PREVIEW} FROM contacts WHERE contacts.id IN (SELECT value FROM json_each(:ids)) "
    "AND contacts.status = 'active' AND NOT contacts.suppressed"
)


class SqliteSearch(BaseBackend):
    async def rows_by_id(self, session: Reader, ids: list[int]) -> list[Any]:
        return list((await session.execute(_ROWS_BY_ID, {"ids": json.dumps(ids)})).all())

    def ids_condition(self, ids: list[int]) -> Any:
        return Contact.id.in_(text("SELECT value FROM json_each(:matched_ids)").bindparams(matched_ids=json.dumps(ids)))

    async def has_prefix(self, session: Reader, word: str) -> bool:
        found = await session.scalar(_HAS_PREFIX, {"low": word, "high": word + "\U0010ffff"})
        return found is not None

    async def similar_terms(self, session: Reader, word: str) -> list[str]:
        grams = sorted({word[i : i + 3] for i in range(len(word) - 2)})
        if len(grams) < 2:
            return []
        pairs = [f"({_quote(a)} AND {_quote(b)})" for i, a in enumerate(grams) for b in grams[i + 1 :]]
        result = await session.execute(_SIMILAR, {"match": " OR ".join(pairs)})
        return [row[0] for row in result]

    async def known_words(self, session: Reader, candidates: list[str]) -> list[str]:
        result = await session.execute(_KNOWN, {"words": json.dumps(candidates)})
        return [row[0] for row in result]
