"""PostgreSQL's parts of search: pg_trgm over the vocabulary for typo corrections, rows by id."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, func, select, text
from sqlalchemy.dialects.postgresql import ARRAY, insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import BigInteger, String

from vpx.contacts.search.engine import PREVIEW_COLUMNS, BaseBackend, Reader
from vpx.models import Contact, SearchTerm

_ROWS_BY_ID = select(*PREVIEW_COLUMNS).where(
    Contact.id == func.any(bindparam("ids", type_=ARRAY(BigInteger()))), Contact.status == "active"
)
_HAS_PREFIX = text("SELECT 1 FROM search_terms WHERE term ~>=~ :low AND term ~<~ :high LIMIT 1")
_SIMILAR = text("SELECT term FROM search_terms WHERE term % :word ORDER BY similarity(term, :word) DESC, term LIMIT 60")
_KNOWN = text("SELECT term FROM search_terms WHERE term = ANY(:words)").bindparams(
    bindparam("words", type_=ARRAY(String()))
)


class PostgresSearch(BaseBackend):
    async def rows_by_id(self, session: Reader, ids: list[int]) -> list[Any]:
        return list((await session.execute(_ROWS_BY_ID, {"ids": ids})).all())

    def ids_condition(self, ids: list[int]) -> Any:
        return Contact.id == func.any(bindparam("matched_ids", value=ids, type_=ARRAY(BigInteger())))

    async def has_prefix(self, session: Reader, word: str) -> bool:
        # The text_pattern_ops operators, not LIKE: a prepared statement's generic plan cannot use
        # the index for `LIKE $1` (the pattern is unknown when it is planned), for a range it can.
        found = await session.scalar(_HAS_PREFIX, {"low": word, "high": word + "\U0010ffff"})
        return found is not None

    async def similar_terms(self, session: Reader, word: str) -> list[str]:
        return [row[0] for row in await session.execute(_SIMILAR, {"word": word})]

    async def known_words(self, session: Reader, candidates: list[str]) -> list[str]:
        return [row[0] for row in await session.execute(_KNOWN, {"words": candidates})]

    async def add_terms(self, session: AsyncSession, terms: set[str]) -> None:
        if terms:
            await session.execute(insert(SearchTerm).on_conflict_do_nothing(), [{"term": t} for t in sorted(terms)])
