"""The search contract shared by both backends."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

from rapidfuzz.distance import OSA
from sqlalchemy import Select, func, select, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from vpx.contacts.normalise import fold, words
from vpx.contacts.search.caches import AnswerCache, FirstPage, Matches
from vpx.models import Contact

if TYPE_CHECKING:
    from vpx.db import Database

MAX_QUERY_WORDS = 8
AnySelect = TypeVar("AnySelect", bound="Select[*tuple[Any, ...]]")
MAX_CORRECTIONS = 3
# How many of a query's first matches are kept per tier: 40 pages of 25. Deeper pages are read from
# the index with an offset.
KEPT_MATCHES = 1_000
# A first page (offset 0) is read on its own, with its total, and at least this many of its ids are
# remembered; the kept matches are read only when a later page is asked for.
FIRST_IDS = 25
_HIGHEST_ID = text("SELECT max(id) FROM contacts")

# Searches read through an ORM session or a bare connection (the API's search uses the latter: it
# has nothing to load into a session).
Reader = AsyncSession | AsyncConnection


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


class SearchBackend(Protocol):
    async def search(self, session: Reader, query: SearchQuery) -> SearchPage: ...

    async def matching_condition(self, session: Reader, query: SearchQuery) -> Any:
        """A WHERE condition on ``contacts`` selecting what the query matches (words with their
        typo corrections, specialty, licence type, filters), or None when it has no words."""
        ...

    async def add_terms(self, session: AsyncSession, terms: set[str]) -> None: ...

    def refresh_from(self, database: Database) -> SearchBackend: ...


# Tiers of relevance: every query word in the business name first, then the other matches; id
# order within a tier. Unranked scans in id order stop as soon as a page is full, where ranking
# every match of a common word costs a hundred times more (docs/search.md).
NAME_TIER, OTHER_TIER, ALL = 1, 2, 0


class BaseBackend:
    """The parts both backends share: planning words and corrections, tiered paging, counting, and
    what is remembered between searches (vpx.contacts.search.caches)."""

    def __init__(self) -> None:
        self.counts: AnswerCache[int] = AnswerCache(capacity=8192)
        # Each query word's corrections (none when catalogue words start with it).
        self.corrections: AnswerCache[tuple[str, ...]] = AnswerCache(capacity=8192)
        # The first KEPT_MATCHES ids of each tier of recent queries: at most ~16 MB of ids.
        self.matches: AnswerCache[Matches] = AnswerCache(capacity=2_000_000, weigh=lambda m: len(m.ids))
        # Each recent query's first page: its ids (page order), total and horizon; at most ~3 MB of ids.
        self.firsts: AnswerCache[FirstPage] = AnswerCache(capacity=400_000, weigh=lambda f: len(f.ids))
        self.database: Database | None = None

    def refresh_from(self, database: Database) -> Self:
        """Stale answers are then served at once and worked out again on a connection of its own."""
        self.database = database
        return self

    def _background(self) -> Callable[[], AbstractAsyncContextManager[Reader]] | None:
        return self.database.read_engine.connect if self.database is not None else None

    async def has_prefix(self, session: Reader, word: str) -> bool:
        raise NotImplementedError

    async def similar_terms(self, session: Reader, word: str) -> list[str]:
        raise NotImplementedError

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
        """Active matching contacts of one tier (or ALL), with the filters, in id order; ``size`` is
        the tier's match count, or a bound on it, when known."""
        raise NotImplementedError

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
        """The ids of the tier's first ``limit`` matches, in id order (``size`` as for fetch), none
        above ``horizon`` when given."""
        raise NotImplementedError

    async def read_first(
        self, session: Reader, query: SearchQuery, plan: TermPlan, limit: int
    ) -> tuple[list[Any], int, int]:
        """The first ``limit`` matches in page order (preview rows), how many there are in all, and
        the highest contact id. Backends may answer it in one statement."""
        horizon = int(await session.scalar(_HIGHEST_ID) or 0)
        total = await self.count(session, query, plan, ALL)
        rows: list[Any] = []
        for tier in (NAME_TIER, OTHER_TIER) if plan.text else (ALL,):
            if total == 0 or len(rows) >= limit:
                break
            size = await self.tier_size_hint(session, query, plan, tier)
            rows += await self.fetch(session, query, plan, tier, limit - len(rows), 0, size)
        return rows, total, horizon

    async def rows_by_id(self, session: Reader, ids: list[int]) -> list[Any]:
        """The preview columns of the active contacts among ``ids``, in any order."""
        raise NotImplementedError

    async def tier_size_hint(self, session: Reader, query: SearchQuery, plan: TermPlan, tier: int) -> int | None:
        """What ``fetch`` and ``fetch_ids`` need to know of a tier's size (None: nothing)."""
        return None

    async def count_matches(self, session: Reader, query: SearchQuery, plan: TermPlan, tier: int) -> int:
        """How many active contacts of the tier (or ALL) match, with the filters."""
        raise NotImplementedError

    def condition(self, query: SearchQuery, plan: TermPlan) -> Any:
        raise NotImplementedError

    async def matching_condition(self, session: Reader, query: SearchQuery) -> Any:
        plan = await self.plan(session, query)
        return None if plan.empty else self.condition(query, plan)

    async def search(self, session: Reader, query: SearchQuery) -> SearchPage:
        plan = await self.plan(session, query)
        if plan.empty:
            return await self.browse(session, query)
        if query.offset == 0:
            return await self._first_page(session, query, plan)
        total = await self.count(session, query, plan, ALL)
        if total == 0:
            return SearchPage(rows=[], total=0)
        # The page, tier by tier: from each tier's kept matches when they reach far enough, else
        # (deep into a large tier) read from the index with an offset.
        pieces: list[tuple[bool, list[Any]]] = []  # (ids?, ids or rows), in page order
        wanted, skip = query.limit, query.offset  # skip: how far into this tier the page starts
        for tier in (NAME_TIER, OTHER_TIER) if plan.text else (ALL,):
            if wanted == 0:
                break
            matches = await self._matches(session, query, plan, tier)
            if matches.complete or skip + wanted <= len(matches.ids):
                taken = list(matches.ids[skip : skip + wanted])
                pieces.append((True, taken))
                wanted -= len(taken)
                skip = max(0, skip - len(matches.ids))
                continue
            size = await self.count(session, query, plan, tier)
            if skip < size:
                rows = await self.fetch(session, query, plan, tier, wanted, skip, size)
                pieces.append((False, rows))
                wanted -= len(rows)
            skip = max(0, skip - size)
        ids = [i for is_ids, part in pieces if is_ids for i in part]
        by_id = {row.id: row for row in await self.rows_by_id(session, ids)} if ids else {}
        page: list[Any] = []
        for is_ids, part in pieces:
            page += [by_id[i] for i in part if i in by_id] if is_ids else part
        return SearchPage(rows=page, total=total)

    async def _first_page(self, session: Reader, query: SearchQuery, plan: TermPlan) -> SearchPage:
        """A first page: what most searches ask for, and most only once. Read on its own (one pass
        over the matches on PostgreSQL) rather than with a thousand kept matches per tier."""
        want = max(query.limit, FIRST_IDS)
        read: list[Any] | None = None

        async def compute(reader: Reader) -> FirstPage:
            nonlocal read
            rows, total, horizon = await self.read_first(reader, query, plan, want + 1)
            read = rows
            ids = array("q", [row.id for row in rows[:want]])
            return FirstPage(ids=ids, total=total, complete=len(rows) <= want, horizon=horizon)

        key = query.count_key()
        first = await self.firsts.get(key, compute, session, background=self._background())
        if not first.complete and len(first.ids) < query.limit:
            first = await compute(session)  # remembered for a smaller page
            self.firsts.put(key, first)
        if read is not None:  # this request read the rows itself
            return SearchPage(rows=read[: query.limit], total=first.total)
        ids = list(first.ids[: query.limit])
        by_id = {row.id: row for row in await self.rows_by_id(session, ids)} if ids else {}
        return SearchPage(rows=[by_id[i] for i in ids if i in by_id], total=first.total)

    async def _matches(self, session: Reader, query: SearchQuery, plan: TermPlan, tier: int) -> Matches:
        async def compute(reader: Reader) -> Matches:
            size = await self.tier_size_hint(reader, query, plan, tier)
            first = self.firsts.peek(query.count_key())
            horizon = first.horizon if first is not None else None
            ids = await self.fetch_ids(reader, query, plan, tier, KEPT_MATCHES + 1, size, horizon)
            return Matches(ids=array("q", ids[:KEPT_MATCHES]), complete=len(ids) <= KEPT_MATCHES)

        return await self.matches.get((*query.count_key(), tier), compute, session, background=self._background())

    async def _clauses(self, session: Reader, text: str | None, *, correct: bool) -> list[WordClause]:
        if not text:
            return []
        clauses = []
        for word in words(text)[:MAX_QUERY_WORDS]:
            corrections: tuple[str, ...] = ()
            if correct and len(word) >= 4 and not word.isdigit():
                corrections = await self._corrections(session, word)
            clauses.append(WordClause(word=word, prefix=len(word) >= 2, corrections=corrections))
        return clauses

    async def _corrections(self, session: Reader, word: str) -> tuple[str, ...]:
        """Nearest vocabulary words for a word that no catalogue word starts with (else none)."""

        async def compute(reader: Reader) -> tuple[str, ...]:
            if await self.has_prefix(reader, word):
                return ()
            return closest(word, await self.similar_terms(reader, word))

        return await self.corrections.get(word, compute, session, background=self._background())

    async def plan(self, session: Reader, query: SearchQuery) -> TermPlan:
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

    async def browse(self, session: Reader, query: SearchQuery) -> SearchPage:
        """No words to match: the filters alone, in id order."""
        rows = (
            await session.execute(
                self.filtered(select(*PREVIEW_COLUMNS), query)
                .order_by(Contact.id)
                .limit(query.limit)
                .offset(query.offset)
            )
        ).all()

        async def compute(reader: Reader) -> int:
            return int(await reader.scalar(self.filtered(select(func.count()).select_from(Contact), query)) or 0)

        total = await self.counts.get((*query.count_key(), "browse"), compute, session, background=self._background())
        return SearchPage(rows=list(rows), total=total)

    async def count(self, session: Reader, query: SearchQuery, plan: TermPlan, tier: int) -> int:
        async def compute(reader: Reader) -> int:
            return await self.count_matches(reader, query, plan, tier)

        return await self.counts.get((*query.count_key(), tier), compute, session, background=self._background())


def backend_for(dialect: str) -> SearchBackend:
    if dialect == "sqlite":
        from vpx.contacts.search.sqlite import SqliteSearch

        return SqliteSearch()
    from vpx.contacts.search.postgres import PostgresSearch

    return PostgresSearch()


def folded(text: str) -> str:
    return fold(text)
