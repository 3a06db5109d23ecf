"""PostgreSQL's parts of search: pg_trgm over the vocabulary for typo corrections, rows by id."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text

from vpx.contacts.search.engine import BaseBackend, Reader
from vpx.contacts.search.postings import pg_array

# Arrays go as one text parameter cast on the server (vpx.contacts.search.postings.pg_array).
_ROWS_BY_ID = text(
    "SELECT id, business_name, city, state, industry, intent_level, email, email_status, phone, website, street, "
    "bad_fields FROM contacts "
    "WHERE id = ANY(CAST(CAST(:ids AS text) AS bigint[])) AND status = 'active' AND NOT suppressed"
)
_HAS_PREFIX = text("SELECT 1 FROM search_terms WHERE term ~>=~ :low AND term ~<~ :high LIMIT 1")
_SIMILAR = text("SELECT term FROM search_terms WHERE term % :word ORDER BY similarity(term, :word) DESC, term LIMIT 60")
_KNOWN = text("SELECT term FROM search_terms WHERE term = ANY(CAST(CAST(:words AS text) AS text[]))")


class PostgresSearch(BaseBackend):
    async def rows_by_id(self, session: Reader, ids: list[int]) -> list[Any]:
        return list((await session.execute(_ROWS_BY_ID, {"ids": pg_array(ids)})).all())

    def ids_condition(self, ids: list[int]) -> Any:
        return text("contacts.id = ANY(CAST(CAST(:matched_ids AS text) AS bigint[]))").bindparams(
            matched_ids=pg_array(ids)
        )

    async def has_prefix(self, session: Reader, word: str) -> bool:
        # The text_pattern_ops operators, not LIKE: a prepared statement's generic plan cannot use
        # the index for `LIKE $1` (the pattern is unknown when it is planned), for a range it can.
        found = await session.scalar(_HAS_PREFIX, {"low": word, "high": word + "\U0010ffff"})
        return found is not None

    async def similar_terms(self, session: Reader, word: str) -> list[str]:
        return [row[0] for row in await session.execute(_SIMILAR, {"word": word})]

    async def known_words(self, session: Reader, candidates: list[str]) -> list[str]:
        return [row[0] for row in await session.execute(_KNOWN, {"words": pg_array(candidates)})]
