"""SQLite: FTS5 over the contacts (kept in step by triggers), a trigram FTS5 over the vocabulary."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import column, select, table, text
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.search.engine import (
    ALL,
    NAME_TIER,
    OTHER_TIER,
    BaseBackend,
    Reader,
    SearchQuery,
    TermPlan,
    WordClause,
    facet_terms,
)
from vpx.models import Contact


def _quote(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def _clause(clause: WordClause) -> str:
    options = [_quote(clause.word) + ("*" if clause.prefix else "")]
    options += [_quote(term) for term in clause.corrections]
    return options[0] if len(options) == 1 else "(" + " OR ".join(options) + ")"


_FTS = table("contacts_fts", column("rowid"))
TEXT_COLUMNS = "{business_name specialty license_type industry city}"


def match_expression(plan: TermPlan, query: SearchQuery, tier: int) -> str:
    """The FTS5 query of a tier (all words anywhere, all in the name, or the difference), with the
    filters as terms of the search_facets column."""
    text = " AND ".join(_clause(c) for c in plan.text)
    fields = ["specialty : " + _clause(c) for c in plan.specialty]
    fields += ["license_type : " + _clause(c) for c in plan.license_type]
    facets = facet_terms(query)
    if facets:
        fields.append("search_facets : (" + " AND ".join(_quote(t) for t in facets) + ")")
    if tier == NAME_TIER:
        return " AND ".join([f"business_name : ({text})", *fields])
    everything = " AND ".join(([f"{TEXT_COLUMNS} : ({text})"] if text else []) + fields)
    if tier == OTHER_TIER:
        return f"({everything}) NOT (business_name : ({text}))"
    return everything


# The full-text index answers the whole question (words and filters; only active contacts are
# indexed); the contacts table is read for the page's rows only. CROSS JOIN keeps SQLite from
# starting at the contacts table, and FTS5 yields rowids in order, so `ORDER BY rowid LIMIT n`
# stops after n matches.
_PREVIEW = (
    "contacts.id, contacts.business_name, contacts.city, contacts.state, contacts.industry, contacts.intent_level"
)
_ROWS = text(
    f"SELECT {_PREVIEW} FROM contacts_fts CROSS JOIN contacts ON contacts.id = contacts_fts.rowid "
    "WHERE contacts_fts MATCH :match ORDER BY contacts_fts.rowid LIMIT :limit OFFSET :offset"
)
_COUNT = text("SELECT count(*) FROM contacts_fts WHERE contacts_fts MATCH :match")
_HAS_PREFIX = text("SELECT 1 FROM search_terms WHERE term >= :low AND term < :high LIMIT 1")
_SIMILAR = text("SELECT term FROM search_terms_trgm WHERE search_terms_trgm MATCH :match ORDER BY rank LIMIT 60")
_IDS = text("SELECT rowid FROM contacts_fts WHERE contacts_fts MATCH :match ORDER BY rowid LIMIT :limit")
_IDS_UP_TO = text(
    "SELECT rowid FROM contacts_fts WHERE contacts_fts MATCH :match AND rowid <= :horizon ORDER BY rowid LIMIT :limit"
)
# One parameter whatever the number of ids (a JSON array), so that one prepared statement serves.
_ROWS_BY_ID = text(
    f"SELECT {_PREVIEW} FROM contacts WHERE contacts.id IN (SELECT value FROM json_each(:ids)) "
    "AND contacts.status = 'active'"
)


class SqliteSearch(BaseBackend):
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
        result = await session.execute(
            _ROWS, {"match": match_expression(plan, query, tier), "limit": limit, "offset": offset}
        )
        return list(result.all())

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
        parameters = {"match": match_expression(plan, query, tier), "limit": limit}
        if horizon is None:
            result = await session.execute(_IDS, parameters)
        else:
            result = await session.execute(_IDS_UP_TO, {**parameters, "horizon": horizon})
        return [row[0] for row in result]

    async def rows_by_id(self, session: Reader, ids: list[int]) -> list[Any]:
        return list((await session.execute(_ROWS_BY_ID, {"ids": json.dumps(ids)})).all())

    def condition(self, query: SearchQuery, plan: TermPlan) -> Any:
        match = text("contacts_fts MATCH :match").bindparams(match=match_expression(plan, query, ALL))
        return Contact.id.in_(select(_FTS.c.rowid).where(match))

    async def count_matches(self, session: Reader, query: SearchQuery, plan: TermPlan, tier: int) -> int:
        return int(await session.scalar(_COUNT, {"match": match_expression(plan, query, tier)}) or 0)

    async def has_prefix(self, session: Reader, word: str) -> bool:
        found = await session.scalar(_HAS_PREFIX, {"low": word, "high": word + "\U0010ffff"})
        return found is not None

    async def similar_terms(self, session: Reader, word: str) -> list[str]:
        grams = {word[i : i + 3] for i in range(len(word) - 2)}
        if not grams:
            return []
        match = " OR ".join(_quote(g) for g in sorted(grams))
        result = await session.execute(_SIMILAR, {"match": match})
        return [row[0] for row in result]

    async def add_terms(self, session: AsyncSession, terms: set[str]) -> None:
        if terms:
            await session.execute(
                text("INSERT OR IGNORE INTO search_terms (term) VALUES (:term)"),
                [{"term": t} for t in sorted(terms)],
            )
