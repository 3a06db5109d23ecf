"""The search contract shared by both backends."""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from rapidfuzz.distance import OSA
from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from vpx.contacts.normalise import fold, words
from vpx.models import Contact

MAX_QUERY_WORDS = 8
AnySelect = TypeVar("AnySelect", bound="Select[*tuple[Any, ...]]")
MAX_CORRECTIONS = 3


@dataclass(frozen=True)
class SearchQuery:
    text: str | None = None
    state: str | None = None
    city: str | None = None
    industry: str | None = None
    specialty: str | None = None
    license_type: str | None = None
    limit: int = 25
    offset: int = 0

    def count_key(self) -> tuple[Any, ...]:
        return (self.text, self.state, self.city, self.industry, self.specialty, self.license_type)


@dataclass
class SearchPage:
    rows: list[Any]
    total: int


@dataclass(frozen=True)
class WordClause:
    """One query word and what may stand for it: the word as a prefix, or exact corrections."""

    word: str
    prefix: bool
    corrections: tuple[str, ...] = ()


@dataclass
class TermPlan:
    text: list[WordClause] = field(default_factory=list)
    specialty: list[WordClause] = field(default_factory=list)
    license_type: list[WordClause] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.text or self.specialty or self.license_type)


def facet_terms(query: SearchQuery) -> list[str]:
    """The filters as the index terms the migrations derive from each contact (see search_facets)."""
    terms = []
    if query.state:
        terms.append("st" + query.state.lower())
    if query.industry:
        terms.append("in" + query.industry.replace("-", ""))
    if query.city:
        terms.append("ct" + "".join(words(query.city)))
    return terms


PREVIEW_COLUMNS = (
    Contact.id,
    Contact.business_name,
    Contact.city,
    Contact.state,
    Contact.industry,
    Contact.intent_level,
)


def max_edits(word: str) -> int:
    return 1 if len(word) < 8 else 2


def closest(word: str, candidates: list[str]) -> tuple[str, ...]:
    """Candidates within the edit budget, nearest first (optimal string alignment distance)."""
    budget = max_edits(word)
    scored = []
    for term in candidates:
        if term == word:
            continue
        distance = OSA.distance(word, term, score_cutoff=budget)
        if distance <= budget:
            scored.append((distance, abs(len(term) - len(word)), term))
    scored.sort()
    return tuple(term for _, _, term in scored[:MAX_CORRECTIONS])


class _CountCache:
    """Totals of recent queries for a minute: paging through one result set, or asking the same
    question again, counts the matches once."""

    def __init__(self, size: int = 4096, ttl: float = 60.0) -> None:
        self.size, self.ttl = size, ttl
        self.items: OrderedDict[tuple[Any, ...], tuple[float, int]] = OrderedDict()

    def get(self, key: tuple[Any, ...]) -> int | None:
        hit = self.items.get(key)
        if hit is None or time.monotonic() - hit[0] > self.ttl:
            return None
        self.items.move_to_end(key)
        return hit[1]

    def put(self, key: tuple[Any, ...], total: int) -> None:
        self.items[key] = (time.monotonic(), total)
        self.items.move_to_end(key)
        while len(self.items) > self.size:
            self.items.popitem(last=False)


class SearchBackend(Protocol):
    async def search(self, session: AsyncSession, query: SearchQuery) -> SearchPage: ...

    async def matching_condition(self, session: AsyncSession, query: SearchQuery) -> Any:
        """A WHERE condition on ``contacts`` selecting what the query matches (words with their
        typo corrections, specialty, licence type, filters), or None when it has no words."""
        ...

    async def add_terms(self, session: AsyncSession, terms: set[str]) -> None: ...


# Tiers of relevance: every query word in the business name first, then the other matches; id
# order within a tier. Unranked scans in id order stop as soon as a page is full, where ranking
# every match of a common word costs a hundred times more (docs/search.md).
NAME_TIER, OTHER_TIER, ALL = 1, 2, 0


class BaseBackend:
    """The parts both backends share: planning words and corrections, tiered paging, counting."""

    def __init__(self) -> None:
        self.counts = _CountCache()

    async def has_prefix(self, session: AsyncSession, word: str) -> bool:
        raise NotImplementedError

    async def similar_terms(self, session: AsyncSession, word: str) -> list[str]:
        raise NotImplementedError

    # Whether fetch() needs each tier's size (PostgreSQL chooses its access path by it).
    wants_tier_sizes = False

    async def fetch(
        self,
        session: AsyncSession,
        query: SearchQuery,
        plan: TermPlan,
        tier: int,
        limit: int,
        offset: int,
        size: int | None = None,
    ) -> list[Any]:
        """Active matching contacts of one tier (or ALL), with the filters, in id order; ``size`` is
        the tier's match count when known."""
        raise NotImplementedError

    def count_statement(self, query: SearchQuery, plan: TermPlan, tier: int) -> Any:
        raise NotImplementedError

    def condition(self, query: SearchQuery, plan: TermPlan) -> Any:
        raise NotImplementedError

    async def matching_condition(self, session: AsyncSession, query: SearchQuery) -> Any:
        plan = await self.plan(session, query)
        return None if plan.empty else self.condition(query, plan)

    async def search(self, session: AsyncSession, query: SearchQuery) -> SearchPage:
        plan = await self.plan(session, query)
        if plan.empty:
            return await self.browse(session, query)
        total = await self.count(session, query, plan, ALL)
        if not plan.text:
            return SearchPage(
                rows=await self.fetch(session, query, plan, ALL, query.limit, query.offset, total), total=total
            )
        rows: list[Any] = []
        in_name: int | None = None
        if self.wants_tier_sizes or query.offset > 0:
            in_name = await self.count(session, query, plan, NAME_TIER)
        if query.offset < (in_name if in_name is not None else query.limit):
            rows = await self.fetch(session, query, plan, NAME_TIER, query.limit, query.offset, in_name)
            if in_name is None and len(rows) < query.limit:
                in_name = len(rows)  # the first page held the whole name tier
        if len(rows) < query.limit and in_name is not None:
            rows += await self.fetch(
                session,
                query,
                plan,
                OTHER_TIER,
                query.limit - len(rows),
                max(0, query.offset - in_name),
                total - in_name,
            )
        return SearchPage(rows=rows, total=total)

    async def _clauses(self, session: AsyncSession, text: str | None, *, correct: bool) -> list[WordClause]:
        if not text:
            return []
        clauses = []
        for word in words(text)[:MAX_QUERY_WORDS]:
            corrections: tuple[str, ...] = ()
            if correct and len(word) >= 4 and not word.isdigit() and not await self.has_prefix(session, word):
                corrections = closest(word, await self.similar_terms(session, word))
            clauses.append(WordClause(word=word, prefix=len(word) >= 2, corrections=corrections))
        return clauses

    async def plan(self, session: AsyncSession, query: SearchQuery) -> TermPlan:
        return TermPlan(
            text=await self._clauses(session, query.text, correct=True),
            specialty=await self._clauses(session, query.specialty, correct=False),
            license_type=await self._clauses(session, query.license_type, correct=False),
        )

    @staticmethod
    def filtered(statement: AnySelect, query: SearchQuery) -> AnySelect:
        statement = statement.where(Contact.status == "active")
        if query.state:
            statement = statement.where(Contact.state == query.state)
        if query.city:
            statement = statement.where(Contact.city_key == " ".join(words(query.city)))
        if query.industry:
            statement = statement.where(Contact.industry == query.industry)
        return statement

    async def browse(self, session: AsyncSession, query: SearchQuery) -> SearchPage:
        """No words to match: the filters alone, in id order."""
        rows = (
            await session.execute(
                self.filtered(select(*PREVIEW_COLUMNS), query)
                .order_by(Contact.id)
                .limit(query.limit)
                .offset(query.offset)
            )
        ).all()
        key = (*query.count_key(), "browse")
        total = self.counts.get(key)
        if total is None:
            total = int(await session.scalar(self.filtered(select(func.count()).select_from(Contact), query)) or 0)
            self.counts.put(key, total)
        return SearchPage(rows=list(rows), total=total)

    async def count(self, session: AsyncSession, query: SearchQuery, plan: TermPlan, tier: int) -> int:
        key = (*query.count_key(), tier)
        cached = self.counts.get(key)
        if cached is not None:
            return cached
        total = int(await session.scalar(self.count_statement(query, plan, tier)) or 0)
        self.counts.put(key, total)
        return total


def backend_for(dialect: str) -> SearchBackend:
    if dialect == "sqlite":
        from vpx.contacts.search.sqlite import SqliteSearch

        return SqliteSearch()
    from vpx.contacts.search.postgres import PostgresSearch

    return PostgresSearch()


def folded(text: str) -> str:
    return fold(text)
