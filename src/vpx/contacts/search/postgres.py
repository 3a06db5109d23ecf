"""PostgreSQL: a generated, weighted tsvector with a GIN index; pg_trgm over the vocabulary."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from sqlalchemy import TextClause, and_, bindparam, cast, func, literal_column, not_, select, text
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
_PREVIEW = "id, business_name, city, state, industry, intent_level"
_HAS_PREFIX = text("SELECT 1 FROM search_terms WHERE term ~>=~ :low AND term ~<~ :high LIMIT 1")
_SIMILAR = text("SELECT term FROM search_terms WHERE term % :word ORDER BY similarity(term, :word) DESC, term LIMIT 60")


@lru_cache(maxsize=128)
def _statement(kind: str, tier: int, faceted: bool, bitmap: bool = False, bounded: bool = False) -> TextClause:
    """The SQL of one shape of question, built once: ``kind`` count, ids or rows, for a tier, with or
    without filters, read through the GIN index and sorted (``bitmap``) or in primary-key order, up
    to a contact id (``bounded``: ``:horizon``). The words are parameters (``:query``,
    ``:name_query``, ``:facets``); the same as ``_matches``."""
    facets = " && CAST(:facets AS tsquery)" if faceted else ""
    if kind == "first":
        return _first_statement(tier, facets)
    words, in_name = "to_tsquery('simple', :query)", "to_tsquery('simple', :name_query)"
    if tier == NAME_TIER:
        where = f"search_vector @@ ({in_name}{facets})"
    elif tier == OTHER_TIER:
        where = f"search_vector @@ ({words}{facets}) AND NOT search_vector @@ {in_name}"
    else:
        where = f"search_vector @@ ({words}{facets})"
    if bounded:
        where += " AND id <= :horizon"
    # `id + 0` is not the indexed expression: the planner must read the matches and sort them.
    order = "id + 0" if bitmap else "id"
    if kind == "count":
        return text(f"SELECT count(*) FROM contacts WHERE status = 'active' AND {where}")
    if kind == "ids":
        return text(f"SELECT id FROM contacts WHERE status = 'active' AND {where} ORDER BY {order} LIMIT :limit")
    if kind == "counted ids":
        # The first ids and how many there are in all, from one pass over the matches.
        return text(
            f"SELECT id, count(*) OVER () FROM contacts WHERE status = 'active' AND {where} "
            "ORDER BY id + 0 LIMIT :limit"
        )
    return text(
        f"SELECT {_PREVIEW} FROM contacts WHERE status = 'active' AND {where} "
        f"ORDER BY {order} LIMIT :limit OFFSET :offset"
    )


def _first_statement(tier: int, facets: str) -> TextClause:
    """A first page in one pass over the matches: every match read once through the GIN index,
    counted (in all, and those with every word in the name), and the page taken in tier order; the
    highest contact id beside it. Reading the kept matches of each tier as well cost two or three
    more passes over a common word's matches."""
    words, in_name = "to_tsquery('simple', :query)", "to_tsquery('simple', :name_query)"
    # Whether a match has every word in its name, tested once a row: testing it again in the count
    # and the ordering doubled the pass ("accounting": 101 -> 49 ms; the count alone 25 ms).
    # Only (id, in name) go through the count and the sort, tested before them (OFFSET 0 keeps the
    # planner from pulling the test up past the count): carrying each match's row, vector included,
    # through the count spilled 24,000 rows to temporary files. The page's rows are read afterwards.
    named = "false" if tier == ALL else f"search_vector @@ {in_name}"
    preview = ", ".join(f"c.{name.strip()}" for name in _PREVIEW.split(","))
    return text(
        f"SELECT {preview}, page.total, page.named, (SELECT max(id) FROM contacts) AS horizon FROM ("
        "SELECT id, in_name, count(*) OVER () AS total, count(*) FILTER (WHERE in_name) OVER () AS named "
        f"FROM (SELECT id, {named} AS in_name FROM contacts "
        f"WHERE status = 'active' AND search_vector @@ ({words}{facets}) OFFSET 0) AS matches "
        "ORDER BY NOT in_name, id LIMIT :limit"
        ") AS page JOIN contacts c ON c.id = page.id ORDER BY NOT page.in_name, page.id"
    )


def _parameters(plan: TermPlan, query: SearchQuery, tier: int) -> dict[str, Any]:
    facets = facet_terms(query)
    values: dict[str, Any] = {}
    if tier != NAME_TIER:
        values["query"] = tsquery_text(plan)
    if tier != ALL:
        values["name_query"] = tsquery_text(plan, name_only=True)
    if facets:
        # Facet lexemes start with "§": no query word can spell one (words are letters and digits).
        values["facets"] = " & ".join("§" + f for f in facets)
    return values


class PostgresSearch(BaseBackend):
    """The filters are lexemes of the search vector: the GIN index intersects them with the words.

    PostgreSQL's estimate of how many rows a tsquery matches can be off by orders of magnitude, and
    with `ORDER BY id LIMIT n` a wrong guess walks the whole table for a rare word; the exact match
    counts (counted once a minute) choose the access path instead. Statements are text built once
    per shape of question (vpx.contacts.search.postgres._statement): building a statement from
    expressions for each search cost a quarter of a search's time.
    """

    async def tier_size_hint(self, session: Reader, query: SearchQuery, plan: TermPlan, tier: int) -> int | None:
        everything = await self.count(session, query, plan, ALL)
        if tier == ALL or _bitmap_is_cheaper(everything, KEPT_MATCHES):
            return everything  # a bound on the tier's size, low enough to choose the bitmap
        # A tier of a large result: its size when known; else fetch_ids counts it as it reads.
        return self.counts.peek((*query.count_key(), tier))

    async def count_matches(self, session: Reader, query: SearchQuery, plan: TermPlan, tier: int) -> int:
        statement = _statement("count", tier, bool(facet_terms(query)))
        return int(await session.scalar(statement, _parameters(plan, query, tier)) or 0)

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
        statement = _statement("rows", tier, bool(facet_terms(query)), _bitmap_is_cheaper(size, limit + offset))
        parameters = {**_parameters(plan, query, tier), "limit": limit, "offset": offset}
        return list((await session.execute(statement, parameters)).all())

    async def fetch_ids(
        self,
        session: Reader,
        query: SearchQuery,
        plan: TermPlan,
        tier: int,
        limit: int,
        size: int | None,
        horizon: int | None = None,
    ) -> list[int]:
        if size == 0:
            return []
        parameters = {**_parameters(plan, query, tier), "limit": limit}
        bounded = horizon is not None
        if bounded:
            parameters["horizon"] = horizon
        faceted = bool(facet_terms(query))
        if size is None and tier != ALL:
            # Counting the tier first and then reading it read its matches twice.
            statement = _statement("counted ids", tier, faceted, bounded=bounded)
            rows = (await session.execute(statement, parameters)).all()
            if not bounded:
                self.counts.put((*query.count_key(), tier), int(rows[0][1]) if rows else 0)
            return [row[0] for row in rows]
        statement = _statement("ids", tier, faceted, _bitmap_is_cheaper(size, limit), bounded)
        return [row[0] for row in await session.execute(statement, parameters)]

    async def read_first(
        self, session: Reader, query: SearchQuery, plan: TermPlan, limit: int
    ) -> tuple[list[Any], int, int]:
        tier = NAME_TIER if plan.text else ALL
        parameters = {**_parameters(plan, query, ALL), "limit": limit}
        if tier == NAME_TIER:
            parameters["name_query"] = tsquery_text(plan, name_only=True)
        rows = list((await session.execute(_statement("first", tier, bool(facet_terms(query))), parameters)).all())
        if not rows:
            self.counts.put((*query.count_key(), ALL), 0)
            return [], 0, 0
        total, named, horizon = int(rows[0].total), int(rows[0].named), int(rows[0].horizon)
        self.counts.put((*query.count_key(), ALL), total)
        if tier == NAME_TIER:
            self.counts.put((*query.count_key(), NAME_TIER), named)
            self.counts.put((*query.count_key(), OTHER_TIER), total - named)
        return rows, total, horizon

    async def rows_by_id(self, session: Reader, ids: list[int]) -> list[Any]:
        return list((await session.execute(_ROWS_BY_ID, {"ids": ids})).all())

    def condition(self, query: SearchQuery, plan: TermPlan) -> Any:
        return _matches(plan, query, ALL)

    async def has_prefix(self, session: Reader, word: str) -> bool:
        # The text_pattern_ops operators, not LIKE: a prepared statement's generic plan cannot use
        # the index for `LIKE $1` (the pattern is unknown when it is planned), for a range it can.
        found = await session.scalar(_HAS_PREFIX, {"low": word, "high": word + "\U0010ffff"})
        return found is not None

    async def similar_terms(self, session: Reader, word: str) -> list[str]:
        return [row[0] for row in await session.execute(_SIMILAR, {"word": word})]

    async def add_terms(self, session: AsyncSession, terms: set[str]) -> None:
        if terms:
            await session.execute(insert(SearchTerm).on_conflict_do_nothing(), [{"term": t} for t in sorted(terms)])
