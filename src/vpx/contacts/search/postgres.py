"""PostgreSQL: a generated, weighted tsvector with a GIN index; pg_trgm over the vocabulary."""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, bindparam, cast, func, literal_column, not_, select, text
from sqlalchemy.dialects.postgresql import ARRAY, TSQUERY, insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import BigInteger

from vpx.contacts.search.engine import (
    ALL,
    KEPT_MATCHES,
    NAME_TIER,
    OTHER_TIER,
    PREVIEW_COLUMNS,
    BaseBackend,
    Reader,
    SearchQuery,
    TermPlan,
    WordClause,
    facet_terms,
)
from vpx.models import Contact, SearchTerm

# Weights in the generated column: A business_name, B specialty, C license_type, D industry and city.


def _clause(clause: WordClause, weight: str = "") -> str:
    options = [clause.word + (":*" if clause.prefix else ":") + weight]
    options += [f"{term}:{weight}" for term in clause.corrections]
    options = [option.rstrip(":") for option in options]
    return options[0] if len(options) == 1 else "(" + " | ".join(options) + ")"


def tsquery_text(plan: TermPlan, *, name_only: bool = False) -> str:
    parts = [_clause(c, "A" if name_only else "") for c in plan.text]
    parts += [_clause(c, "B") for c in plan.specialty]
    parts += [_clause(c, "C") for c in plan.license_type]
    return " & ".join(parts)


def _tsquery(text_query: str, facets: list[str]) -> Any:
    query: Any = func.to_tsquery(literal_column("'simple'"), text_query)
    if facets:
        # Facet lexemes start with "§": no query word can spell one (words are letters and digits).
        query = query.op("&&")(cast(" & ".join("§" + f for f in facets), TSQUERY))
    return query


def _matches(plan: TermPlan, query: SearchQuery, tier: int) -> Any:
    vector: Any = literal_column("contacts.search_vector")
    facets = facet_terms(query)
    if tier == NAME_TIER:
        return vector.op("@@")(_tsquery(tsquery_text(plan, name_only=True), facets))
    everything = vector.op("@@")(_tsquery(tsquery_text(plan), facets))
    if tier == OTHER_TIER:
        in_name = vector.op("@@")(_tsquery(tsquery_text(plan, name_only=True), []))
        return and_(everything, not_(in_name))
    return everything


# Up to this many matches, read them all through the GIN index and sort them; beyond it, walk the
# primary key in id order until enough are found. Walking costs ~1 µs a row and must pass
# wanted × table / matches rows; reading costs ~5 µs a match: they break even near
# √(wanted × table size / 5) matches (2,000 for a page of 25 at a million contacts; 14,000 for the
# kept first thousand).
TABLE_SIZE_HINT = 1_000_000


def _bitmap_is_cheaper(size: int | None, wanted: int) -> bool:
    return size is not None and size * size <= wanted * TABLE_SIZE_HINT // 5


_ROWS_BY_ID = select(*PREVIEW_COLUMNS).where(
    Contact.id == func.any(bindparam("ids", type_=ARRAY(BigInteger()))), Contact.status == "active"
)


class PostgresSearch(BaseBackend):
    """The filters are lexemes of the search vector: the GIN index intersects them with the words.

    PostgreSQL's estimate of how many rows a tsquery matches can be off by orders of magnitude, and
    with `ORDER BY id LIMIT n` a wrong guess walks the whole table for a rare word; the exact match
    counts (counted once a minute) choose the access path instead.
    """

    async def tier_size_hint(self, session: Reader, query: SearchQuery, plan: TermPlan, tier: int) -> int | None:
        everything = await self.count(session, query, plan, ALL)
        if tier == ALL or _bitmap_is_cheaper(everything, KEPT_MATCHES):
            return everything  # a bound on the tier's size, low enough to choose the bitmap
        return await self.count(session, query, plan, tier)

    def _in_order(self, plan: TermPlan, query: SearchQuery, tier: int, wanted: int, size: int | None) -> Any:
        statement = select(Contact.id).where(Contact.status == "active", _matches(plan, query, tier))
        # `id + 0` is not the indexed expression: the planner must read the matches and sort them.
        return statement.order_by(Contact.id + 0 if _bitmap_is_cheaper(size, wanted) else Contact.id)

    async def fetch(
        self,
        session: Reader,
        query: SearchQuery,
        plan: TermPlan,
        tier: int,
        limit: int,
        offset: int,
        size: int | None = None,
    ) -> list[Any]:
        if size == 0:
            return []
        statement = select(*PREVIEW_COLUMNS).where(Contact.status == "active", _matches(plan, query, tier))
        order = Contact.id + 0 if _bitmap_is_cheaper(size, limit + offset) else Contact.id
        result = await session.execute(statement.order_by(order).limit(limit).offset(offset))
        return list(result.all())

    async def fetch_ids(
        self, session: Reader, query: SearchQuery, plan: TermPlan, tier: int, limit: int, size: int | None
    ) -> list[int]:
        if size == 0:
            return []
        result = await session.execute(self._in_order(plan, query, tier, limit, size).limit(limit))
        return [row[0] for row in result]

    async def rows_by_id(self, session: Reader, ids: list[int]) -> list[Any]:
        return list((await session.execute(_ROWS_BY_ID, {"ids": ids})).all())

    def condition(self, query: SearchQuery, plan: TermPlan) -> Any:
        return _matches(plan, query, ALL)

    def count_statement(self, query: SearchQuery, plan: TermPlan, tier: int) -> Any:
        return select(func.count()).select_from(Contact).where(Contact.status == "active", _matches(plan, query, tier))

    async def has_prefix(self, session: Reader, word: str) -> bool:
        # The text_pattern_ops operators, not LIKE: a prepared statement's generic plan cannot use
        # the index for `LIKE $1` (the pattern is unknown when it is planned), for a range it can.
        found = await session.scalar(
            text("SELECT 1 FROM search_terms WHERE term ~>=~ :low AND term ~<~ :high LIMIT 1"),
            {"low": word, "high": word + "\U0010ffff"},
        )
        return found is not None

    async def similar_terms(self, session: Reader, word: str) -> list[str]:
        result = await session.execute(
            text(
                "SELECT term FROM search_terms WHERE term % :word ORDER BY similarity(term, :word) DESC, term LIMIT 60"
            ),
            {"word": word},
        )
        return [row[0] for row in result]

    async def add_terms(self, session: AsyncSession, terms: set[str]) -> None:
        if terms:
            await session.execute(insert(SearchTerm).on_conflict_do_nothing(), [{"term": t} for t in sorted(terms)])
